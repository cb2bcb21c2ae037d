import type { Deps } from '../../deps.js';
import type { SlackDirectory } from '../transport/directory.js';
import type { SlackOutboxApi } from '../transport/slack-api.js';

/** What listeners are given: the app's deps, the Web API for the App Home and who is in which channel or group. */
export interface SlackContext {
  deps: Deps;
  api: SlackOutboxApi;
  directory?: SlackDirectory;
}
