/**
 * Methods of a Durable Object class as a worker calls them through its stub: the class's own
 * signatures, each answer a promise. Derived from the class, so a client restates no method and
 * cannot drift from it.
 *
 * A stub (`DurableObjectStub<Class>`) satisfies this type as it is, no cast: Workers RPC types
 * check each argument against the class's parameters. They type an answer holding a value typed
 * `unknown` (tool arguments, stored JSON) as `never`, since `unknown` is not provably serializable;
 * every answer of ours is plain JSON, which RPC carries unchanged, so the class's own answer is the
 * true type, and `never` is assignable to it.
 */
export type RpcClient<Class, Methods extends keyof Class> = {
  [Name in Methods]: Class[Name] extends (...args: infer Args) => infer Answer
    ? (...args: Args) => Promise<Awaited<Answer>>
    : never;
};
