/** The aggregated flow list (`/api/aggnetflow/list`): conversations hour by hour. */
export { AggregatedPage as Page } from './flow-list.js';
