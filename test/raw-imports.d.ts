/** `import text from "./file.md?raw"`: Vite (and so the vitest pool) imports a file's text as a string. */
declare module "*.md?raw" {
  const text: string;
  export default text;
}

/** `import text from "../.dev.vars.example?raw"`: the committed example of the local secrets. */
declare module "*.example?raw" {
  const text: string;
  export default text;
}
