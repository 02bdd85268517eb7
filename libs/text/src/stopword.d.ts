/** The `stopword` package ships no types; Alfred uses only its English list. */
declare module 'stopword' {
  const stopword: { readonly eng: readonly string[] };
  export default stopword;
}
