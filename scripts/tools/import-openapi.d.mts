// Types of import-openapi.mjs for the TypeScript tests that drive it.

export declare class ImportError extends Error {}

export interface Problem {
  location: string;
  message: string;
}

export interface DraftedTool {
  name: string;
  operationId: string;
  method: string;
  path: string;
  /** What a human must decide before `check` accepts the tool. */
  review: string[];
}

export interface Draft {
  /** The declaration as written, before YAML. */
  declaration: {
    format: 1;
    namespace: string;
    upstreams: Record<string, Record<string, unknown>>;
    /** Proposed behind a draft marker when more tools are drafted than a run lists at once. */
    default_tools?: { draft: string[]; why: string };
    tools: Record<string, unknown>[];
  };
  text: string;
  tools: DraftedTool[];
  /** Constructs the catalog cannot express, with their location in the document. */
  problems: Problem[];
  notes: string[];
}

export declare function importOpenApi(
  file: string,
  options: {
    namespace: string;
    operations?: string[] | null;
    /** The proxy's own origins, never proposed as a base (`npm start`'s when not given). */
    own?: import("./upstream-hosts").ProxyOrigins;
  },
): Promise<Draft>;

export declare function runImportOpenApi(args: string[]): Promise<number>;
