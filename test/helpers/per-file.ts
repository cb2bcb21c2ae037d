import { forgetAllSecrets } from '../../src/secrets.js';

/**
 * Runs before each test file (vitest.config.ts `setupFiles`). Test files share
 * their worker's modules (`isolate: false`), so the one process-wide state the
 * app keeps, the secrets it redacts, starts empty for each file as it would in
 * a process of its own. Every other module-level map is a memo keyed by its
 * whole input.
 */
forgetAllSecrets();
