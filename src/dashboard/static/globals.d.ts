/** The globals the page's scripts share: uPlot, loaded from /static/uplot.js before app.js. */
import type uPlotType from 'uplot';

declare global {
  const uPlot: typeof uPlotType;
}
