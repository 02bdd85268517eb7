import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { FetchGuard, type ResolvedAddress, type VettedTarget } from './fetch-guard.js';

const PUBLIC_V4 = '93.184.216.34';

/** Test DNS: fixed answers per host name; unknown names fail like NXDOMAIN. */
function resolverOf(table: Record<string, string[]>) {
  return async (hostname: string): Promise<ResolvedAddress[]> => {
    const answers = table[hostname];
    if (!answers) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

describe(FetchGuard.name, () => {
  describe('decide', () => {
    const guard = new FetchGuard({
      resolver: resolverOf({
        'api.example.com': [PUBLIC_V4],
        'a.b.example.com': [PUBLIC_V4],
        'mixed.example.com': [PUBLIC_V4, '10.1.2.3'],
        'six.example.com': ['2606:2800:220:1::1'],
        'rebind.example.com': ['::ffff:169.254.169.254'],
        localhost: ['127.0.0.1', '::1'],
      }),
    });

    it.each([
      ['ftp://api.example.com/', ['api.example.com'], /only http and https URLs are allowed, not ftp:/],
      ['http://user:pw@api.example.com/', ['api.example.com'], /credentials in URLs are not allowed/],
      ['https://evil.com/', ['api.example.com'], /host evil\.com is not in the skill's allowed hosts/],
      ['https://example.com/', ['*.example.com'], /not in the skill's allowed hosts/],
      ['https://badexample.com/', ['*.example.com'], /not in the skill's allowed hosts/],
      ['https://api.example.com:8443/', ['api.example.com'], /not in the skill's allowed hosts/],
      ['https://mixed.example.com/', ['mixed.example.com'], /resolves to 10\.1\.2\.3, a private address/],
      [
        'https://rebind.example.com/',
        ['rebind.example.com'],
        /the cloud metadata address \(IPv4-mapped: 169\.254\.169\.254\)/,
      ],
      ['http://localhost/', ['localhost'], /resolves to 127\.0\.0\.1, a loopback address/],
      ['https://nowhere.example.com/', ['*.example.com'], /could not be resolved: getaddrinfo ENOTFOUND/],
      ['http://169.254.169.254/', ['169.254.169.254'], /is the cloud metadata address/],
      ['http://169.254.1.1/', ['169.254.1.1'], /is a link-local address/],
      ['http://2130706433/', ['127.0.0.1'], /127\.0\.0\.1 is a loopback address/],
      ['http://0x7f.1/', ['127.0.0.1'], /127\.0\.0\.1 is a loopback address/],
      ['http://[::1]/', ['[::1]', '::1'], /not in the skill's allowed hosts|is a loopback address/],
      ['http://10.0.0.1/', ['10.0.0.1'], /is a private address/],
      ['http://172.16.5.4/', ['172.16.5.4'], /is a private address/],
      ['http://192.168.1.1/', ['192.168.1.1'], /is a private address/],
      ['http://100.64.0.1/', ['100.64.0.1'], /CGNAT/],
      ['http://0.0.0.0/', ['0.0.0.0'], /is an unspecified address/],
      ['http://224.0.0.1/', ['224.0.0.1'], /is a multicast address/],
      ['http://255.255.255.255/', ['255.255.255.255'], /is a broadcast address/],
    ])('should refuse %s (allowed %j)', async (url, hosts, reason) => {
      const decision = await guard.decide(url, hosts);
      expect(decision.allowed).toBe(false);
      if (!decision.allowed) expect(decision.reason).toMatch(reason);
    });

    it.each([
      ['https://api.example.com/v1', ['api.example.com']],
      ['https://a.b.example.com/', ['*.example.com']],
      ['https://api.example.com:8443/', ['api.example.com:8443']],
      ['https://six.example.com/', ['six.example.com']],
      [`http://${PUBLIC_V4}/`, [PUBLIC_V4]],
    ])('should allow %s (allowed %j) with the vetted addresses', async (url, hosts) => {
      const decision = await guard.decide(url, hosts);
      expect(decision).toMatchObject({ allowed: true });
      if (decision.allowed) expect(decision.addresses.length).toBeGreaterThan(0);
    });

    it.each([
      '::ffff:7f00:1',
      '::ffff:127.0.0.1',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::',
      '64:ff9b::a00:1',
      '2002:a00:1::1',
    ])('should refuse the IPv6 address %s', async (address) => {
      const decision = await new FetchGuard({ resolver: resolverOf({ 'v6.example.com': [address] }) }).decide(
        'https://v6.example.com/',
        ['v6.example.com'],
      );
      expect(decision.allowed).toBe(false);
    });
  });

  describe('fetch', () => {
    let server: Server;
    let port = 0;
    let dialed: VettedTarget[];
    let received: { url: string; method: string; authorization?: string }[];

    // Tests route vetted public addresses to the loopback server; the production factory connects to the vetted
    // address.
    const toLoopback = (target: VettedTarget) => {
      dialed.push(target);
      return new Agent({ connect: { lookup: (_h, _o, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]) } });
    };
    const guardFor = (table: Record<string, string[]>, maxResponseBytes?: number) =>
      new FetchGuard({ resolver: resolverOf(table), dispatcherFactory: toLoopback, maxResponseBytes });

    beforeAll(async () => {
      server = createServer((req, res) => {
        received.push({ url: req.url ?? '', method: req.method ?? '', authorization: req.headers.authorization });
        const [route, target] = (req.url ?? '').split('?to=');
        if (route === '/redirect') res.writeHead(302, { location: decodeURIComponent(target ?? '') }).end();
        else if (route === '/see-other') res.writeHead(303, { location: '/hello' }).end();
        else if (route === '/loop') res.writeHead(307, { location: '/loop' }).end();
        else if (route === '/big') res.end(Buffer.alloc(4096, 97));
        else res.end(`hello from ${req.headers.host}`);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));
    beforeEach(() => {
      dialed = [];
      received = [];
    });

    it('should fetch an allowed host through the vetted address', async () => {
      const guard = guardFor({ 'api.test': [PUBLIC_V4] });
      const response = await guard.fetch({ url: `http://api.test:${port}/hello` }, [`api.test:${port}`]);
      expect(response.status).toBe(200);
      expect(Buffer.from(response.body).toString()).toBe(`hello from api.test:${port}`);
      expect(dialed.map((t) => t.addresses)).toEqual([[{ address: PUBLIC_V4, family: 4 }]]);
    });

    it('should never dial a refused host', async () => {
      const guard = guardFor({ 'metadata.test': ['169.254.169.254'] });
      await expect(guard.fetch({ url: 'http://metadata.test/' }, ['metadata.test'])).rejects.toThrow(
        /the cloud metadata address/,
      );
      await expect(guard.fetch({ url: 'http://10.0.0.1/' }, ['10.0.0.1'])).rejects.toThrow(/a private address/);
      expect(dialed).toEqual([]);
      expect(received).toEqual([]);
    });

    // Every non-global range, as a DNS answer for an allowed host: refused with its reason, and nothing is dialed.
    it.each([
      ['fec0::1', /a site-local address/],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /a Teredo address/],
      ['2001::1', /a Teredo address/],
      ['::ffff:0:a00:1', /an IPv4-translated address/],
      ['::ffff:0:5db8:d822', /an IPv4-translated address/],
      ['::ffff:10.0.0.1', /a private address \(IPv4-mapped: 10\.0\.0\.1\)/],
      ['::ffff:7f00:1', /a loopback address \(IPv4-mapped: 127\.0\.0\.1\)/],
      ['64:ff9b::a00:1', /a private address \(NAT64: 10\.0\.0\.1\)/],
      ['64:ff9b::169.254.169.254', /the cloud metadata address \(NAT64: 169\.254\.169\.254\)/],
      ['64:ff9b::7f00:1', /a loopback address \(NAT64: 127\.0\.0\.1\)/],
      ['64:ff9b:1::a00:1', /a NAT64 address/],
      ['2002:a00:1::1', /a 6to4 address/],
      ['2002:c0a8:101::1', /a 6to4 address/],
      ['::a00:1', /a reserved address/],
      ['::127.0.0.1', /a reserved address/],
      ['100::1', /a discard-only address/],
      ['2001:db8::1', /a reserved address/],
      ['2001:2::1', /a benchmarking address/],
      ['2001:10::1', /an ORCHID address/],
      ['5f00::1', /a segment routing address/],
      ['3fff::1', /a reserved address/],
      ['4000::1', /a reserved address/],
      ['fd00:ec2::254', /a private address/],
      ['fe80::1%eth0', /a link-local address/],
      ['ff02::1', /a multicast address/],
      ['::', /an unspecified address/],
      ['::1', /a loopback address/],
      ['192.0.0.8', /a reserved address/],
      ['192.88.99.1', /a reserved address/],
      ['198.18.0.1', /a reserved address/],
      ['240.0.0.1', /a reserved address/],
      ['192.31.196.1', /AS112/],
    ])('should refuse %s without dialing it', async (address, reason) => {
      const guard = guardFor({ 'target.test': [address] });
      await expect(guard.fetch({ url: `http://target.test:${port}/hello` }, [`target.test:${port}`])).rejects.toThrow(
        reason,
      );
      expect(dialed).toEqual([]);
      expect(received).toEqual([]);
    });

    it.each(['64:ff9b::5db8:d822', '::ffff:93.184.216.34', '2606:4700::1', PUBLIC_V4])(
      'should dial %s, a global address (also through NAT64 / IPv4-mapped forms)',
      async (address) => {
        const guard = guardFor({ 'target.test': [address] });
        const response = await guard.fetch({ url: `http://target.test:${port}/hello` }, [`target.test:${port}`]);
        expect(response.status).toBe(200);
        expect(dialed.map((t) => t.addresses[0]?.address)).toEqual([address]);
      },
    );

    it('should refuse a redirect to a private address without dialing it', async () => {
      const guard = guardFor({ 'api.test': [PUBLIC_V4], 'internal.test': ['10.0.0.5'] });
      const to = encodeURIComponent(`http://internal.test:${port}/admin`);
      await expect(
        guard.fetch({ url: `http://api.test:${port}/redirect?to=${to}` }, [
          `api.test:${port}`,
          `internal.test:${port}`,
        ]),
      ).rejects.toThrow(/redirect refused: internal\.test:\d+ resolves to 10\.0\.0\.5, a private address/);
      expect(dialed.map((t) => t.hostname)).toEqual(['api.test']);
    });

    it('should refuse a redirect to the metadata address and to hosts outside the allowlist', async () => {
      const guard = guardFor({ 'api.test': [PUBLIC_V4] });
      for (const target of ['http://169.254.169.254/latest/meta-data/', 'https://elsewhere.test/']) {
        const url = `http://api.test:${port}/redirect?to=${encodeURIComponent(target)}`;
        await expect(guard.fetch({ url }, [`api.test:${port}`, '169.254.169.254'])).rejects.toThrow(/redirect refused/);
      }
      expect(dialed.every((t) => t.hostname === 'api.test')).toBe(true);
    });

    it('should follow an allowed redirect, dropping credentials across origins', async () => {
      const guard = guardFor({ 'api.test': [PUBLIC_V4], 'cdn.test': ['2606:4700::1'] });
      const to = encodeURIComponent(`http://cdn.test:${port}/hello`);
      const response = await guard.fetch(
        { url: `http://api.test:${port}/redirect?to=${to}`, headers: { Authorization: 'Bearer skill-key' } },
        [`api.test:${port}`, `cdn.test:${port}`],
      );
      expect(Buffer.from(response.body).toString()).toBe(`hello from cdn.test:${port}`);
      expect(received.map((r) => r.authorization)).toEqual(['Bearer skill-key', undefined]);
      expect(dialed.map((t) => t.addresses[0]?.address)).toEqual([PUBLIC_V4, '2606:4700::1']);
    });

    it('should turn a POST into a GET on 303', async () => {
      const guard = guardFor({ 'api.test': [PUBLIC_V4] });
      await guard.fetch({ url: `http://api.test:${port}/see-other`, method: 'POST', body: Buffer.from('x') }, [
        `api.test:${port}`,
      ]);
      expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /see-other', 'GET /hello']);
    });

    it('should stop after five redirects', async () => {
      const guard = guardFor({ 'api.test': [PUBLIC_V4] });
      await expect(guard.fetch({ url: `http://api.test:${port}/loop` }, [`api.test:${port}`])).rejects.toThrow(
        /too many redirects \(more than 5\)/,
      );
      expect(received).toHaveLength(6);
    });

    it('should cap the response body', async () => {
      const guard = guardFor({ 'api.test': [PUBLIC_V4] }, 1024);
      await expect(guard.fetch({ url: `http://api.test:${port}/big` }, [`api.test:${port}`])).rejects.toThrow(
        /response body exceeds 1024 bytes/,
      );
    });
  });
});
