/** Vite's `?raw` imports: a file's text (test/docs.test.ts reads the docs pages this way). */
declare module '*?raw' {
  const text: string;
  export default text;
}
