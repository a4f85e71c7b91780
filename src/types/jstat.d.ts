/** The part of jstat (no published types) that the paired comparisons and the rank correlation use. */
declare module 'jstat' {
  const jstat: {
    jStat: {
      /** The arithmetic mean. */
      mean(xs: number[]): number;
      /** The standard deviation; `sample` true divides by n − 1. */
      stdev(xs: number[], sample?: boolean): number;
      /** Pearson's correlation coefficient of two equally long series. */
      corrcoeff(a: number[], b: number[]): number;
      /** Student's t distribution with `dof` degrees of freedom. */
      studentt: {
        /** The quantile: the t with P(T ≤ t) = p. */
        inv(p: number, dof: number): number;
      };
    };
  };
  export default jstat;
}
