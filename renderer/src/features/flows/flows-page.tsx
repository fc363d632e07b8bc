/** The flow list (spec part 3, Flow explorer): active flows or a window, filters in the URL. */
export { FlowListPage as Page } from './flow-list.js';
