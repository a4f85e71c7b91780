/** The part of jstat (no published types) that the paired comparisons use. */
declare module 'jstat' {
  const jstat: {
    jStat: {
      /** Student's t distribution with `dof` degrees of freedom. */
      studentt: {
        /** The quantile: the t with P(T ≤ t) = p. */
        inv(p: number, dof: number): number;
      };
    };
  };
  export default jstat;
}
