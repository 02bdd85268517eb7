import { parseMetrics, routeStats, samplesOf } from './metrics';

const TEXT = `# HELP alfred_http_requests_total HTTP requests
# TYPE alfred_http_requests_total counter
alfred_http_requests_total{method="GET",route="/search",status="200"} 3
alfred_http_requests_total{method="GET",route="/search",status="503"} 1
alfred_http_requests_total{method="POST",route="/memories",status="201"} 5
alfred_http_request_duration_seconds_sum{method="GET",route="/search"} 0.2
alfred_http_request_duration_seconds_count{method="GET",route="/search"} 4
alfred_queue_depth{queue="distill \\"x\\""} 2
`;

describe(parseMetrics.name, () => {
  it('should read names, unescaped labels and values, skipping comments', () => {
    const samples = parseMetrics(TEXT);
    expect(samples).toHaveLength(6);
    expect(samplesOf(samples, 'alfred_queue_depth')).toEqual([
      { name: 'alfred_queue_depth', labels: { queue: 'distill "x"' }, value: 2 },
    ]);
  });
});

describe(routeStats.name, () => {
  it('should sum requests per route, count 5xx and compute the mean latency, busiest first', () => {
    expect(routeStats(parseMetrics(TEXT))).toEqual([
      { route: '/memories', method: 'POST', requests: 5, errors: 0, meanMs: 0 },
      { route: '/search', method: 'GET', requests: 4, errors: 1, meanMs: 50 },
    ]);
  });
});
