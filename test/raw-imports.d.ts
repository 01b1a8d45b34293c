// Vite's `?raw` imports (a file's text), as the workerd suite uses them for CHANGELOG.md.
declare module '*?raw' {
  const text: string;
  export default text;
}
