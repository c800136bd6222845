/** Types of bench/workload.mjs, for the tests: the orders its reads name, in turn. */
export const READ_ORDERS: number;
