import type { Deps } from '../../deps.js';
import type { SlackOutboxApi } from '../slack-api.js';

/** What listeners are given: the app's deps and the Web API for the App Home. */
export interface SlackContext {
  deps: Deps;
  api: SlackOutboxApi;
}
