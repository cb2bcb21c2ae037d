import type { Deps } from '../deps.js';
import type { LauncherConfig } from '../db/schema.js';
import type { RunOutcome } from '../ledger/runs.js';
import type { LaunchContext, LaunchOutcome, Launcher } from '../launcher.js';
import { callbackTokenFor, signLaunchRequest, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './signature.js';
import { releaseRunLease, takeRunLease, type HeldRuns } from '../ledger/run-leases.js';
import { reportOutcome } from './report-outcome.js';
import { hostAllowed, parseAllowList, type AllowList } from '../domain/address-policy.js';
import { guardedPost, TargetNotAllowedError, type PostAnswer } from './guarded-post.js';
import { launchSigningKey } from '../domain/launch-signing.js';
import { launcherRequestHeaders } from '../domain/webhook-headers.js';
import { redactSecrets } from '../secrets.js';
import { isWebLink } from '../domain/text.js';
import { launchAnswerError, launchAnswerKind, launchRefusalError, resendDelayMs } from '../domain/launch-answer.js';
import { InFlightRuns, SHUTTING_DOWN } from './in-flight.js';

type HttpConfig = Extract<LauncherConfig, { kind: 'http' }>;
type HttpDeps = Pick<Deps, 'db' | 'clock' | 'logger' | 'replicaId' | 'config'>;

export interface HttpLauncherOptions {
  /** How much of the answer's body is kept as the run's log excerpt. */
  excerptBytes?: number;
  /** A callback target must accept (answer 2xx) within this, whatever the run's own timeout. */
  acceptTimeoutMs?: number;
  /** Aborted when the replica stops: ends the retrying of outcome reports the database has not taken (report-outcome.ts). */
  stop?: AbortSignal;
}

/** What the far side receives, signed; docs/launchers.md documents it field by field. */
export interface LaunchRequestBody {
  runId: number;
  tenant: string;
  workflow: string;
  tick: string | null;
  attempt: number;
  trigger: string;
  mode: 'sync' | 'callback';
  timeoutSeconds: number;
  callbackUrl: string;
  callbackToken: string;
}

export function publicBaseUrl(config: HttpDeps['config']): string {
  return (config.PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
}

/**
 * POSTs a signed launch request. `sync`: the answer is the outcome (2xx
 * succeeded, anything else failed with the answer's excerpt). `callback`: a
 * 2xx means accepted; the far side then reports the end to `callbackUrl`, and
 * the run's lease is dropped so only its deadline (the freshness detector) can
 * fail it as timed out, whichever replica is alive by then.
 */
export interface HttpLauncher extends Launcher {
  /**
   * For a replica shutting down: waits up to `graceMs` for the launches still
   * waiting for their answer (a sync run, a callback target not yet
   * accepting), then drops their requests and records them failed as
   * interrupted (src/launch/in-flight.ts), as for a command.
   */
  shutdown(graceMs: number): Promise<void>;
}

/** The error of a launch whose answer the stopping replica could not wait for. */
export const INTERRUPTED = "interrupted: the scheduler-bot replica waiting for the target's answer shut down (the target may still be running it)";

export function createHttpLauncher(deps: HttpDeps, held: HeldRuns, options: HttpLauncherOptions = {}): HttpLauncher {
  const excerptBytes = options.excerptBytes ?? 8 * 1024;
  const acceptTimeoutMs = options.acceptTimeoutMs ?? 30_000;
  const live = new InFlightRuns();

  return {
    kind: 'http',
    shutdown: (graceMs: number) => live.shutdown(graceMs),
    async launch(ctx: LaunchContext): Promise<LaunchOutcome> {
      const config = ctx.workflow.launcher;
      if (!config || config.kind !== 'http') return { started: false, error: 'workflow has no http launcher' };
      if (!live.open) return { started: false, error: SHUTTING_DOWN };
      // A tenant's launcher reaches only what the operator allows; the operator's own reach anywhere.
      let list: AllowList | undefined;
      if (!config.operatorSet) {
        list = await tenantAllowList(ctx.tenant.id);
        const host = new URL(config.url).hostname;
        if (!hostAllowed(host, list)) return { started: false, refusal: { kind: 'host_not_allowed', host, tenant: ctx.tenant.id } };
      }
      const key = launchSigningKey(config, deps.config.LAUNCHER_SECRET);
      if (!key.ok) return { started: false, refusal: { kind: 'no_signing_secret', reason: key.reason } };
      const mode = config.mode ?? 'sync';
      // Signed at each send: a request sent again after a Retry-After carries a fresh timestamp.
      const sign = () => signedRequest(deps, ctx, config, key.secret, mode);

      const log = deps.logger.child({ runId: ctx.runId, workflow: ctx.workflow.name, tenant: ctx.tenant.id });
      if (!(await holdForRequest(deps, held, ctx.runId, log))) return { started: false, error: "the run ended or became another replica's before it was sent" };
      // The request runs on after launch() returns: a slow target must not hold up the tick loop.
      const interrupt = new AbortController();
      // Before a re-send too: a run that ended or became another replica's during a Retry-After is not sent again.
      const stillOurs = () => holdsLease(deps, ctx.runId, log);
      const done = deliver(ctx, config, mode, { sign, stillOurs, list, interrupt: interrupt.signal }, log).finally(() => {
        held.release(ctx.runId);
        live.delete(ctx.runId);
      });
      live.add(ctx.runId, { done, interrupt: () => interrupt.abort() });
      return { started: true };
    },
  };

  async function tenantAllowList(tenantId: string): Promise<AllowList> {
    const tenant = await deps.db.selectFrom('tenants').select('launcherHosts').where('id', '=', tenantId).executeTakeFirst();
    return parseAllowList([...deps.config.HTTP_LAUNCHER_ALLOWED_HOSTS, ...(tenant?.launcherHosts ?? [])]);
  }

  /**
   * Sends the request (`askTarget`) and records what its answer means (src/domain/launch-answer.ts): a
   * 2xx is the outcome (sync) or the acceptance (callback); anything else fails the run with the answer,
   * a permanent one (a 4xx but 408, 425, 429; a 3xx) saying it is not retried.
   */
  async function deliver(ctx: LaunchContext, config: HttpConfig, mode: 'sync' | 'callback', request: Request, log: Deps['logger']) {
    const limits = { timeoutSeconds: ctx.timeoutSeconds, acceptTimeoutMs, excerptBytes, tenantId: ctx.tenant.id };
    const answer = await askTarget(deps, config, mode, request, limits, log);
    if (answer.kind === 'gone') {
      log.info({ url: config.url }, 'the run ended or became another replica\'s while its launch waited out a Retry-After; not sent again');
      return;
    }
    if (answer.kind === 'failed') {
      log.warn({ url: config.url, reason: answer.reason }, 'http launch failed');
      await reportOutcome(deps, ctx.runId, { status: 'failed', error: answer.reason }, options.stop);
      return;
    }
    const { status, text, location } = answer;
    const kind = launchAnswerKind(status);
    if (kind !== 'success') {
      if (kind === 'permanent') log.warn({ url: config.url, status }, 'http launch refused for good; its tick is not retried');
      await reportOutcome(deps, ctx.runId, { status: 'failed', error: launchAnswerError(status, text, location, config.url), logExcerpt: text || null }, options.stop);
    } else if (mode === 'sync') {
      await reportOutcome(deps, ctx.runId, { status: 'succeeded', logExcerpt: text || null, ...reportedDetails(text) }, options.stop);
    } else {
      await releaseRunLease(deps, ctx.runId).catch((error) => log.warn({ err: error }, 'could not release the lease of an accepted callback run'));
    }
  }
}

type TargetAnswer = { kind: 'answer'; status: number; text: string; location: string | undefined } | { kind: 'failed'; reason: string } | { kind: 'gone' };

/**
 * Sends the launch request until it has an answer to record: a transient answer with a Retry-After
 * that ends before the run's deadline (`resendDelayMs`) is sent again after it, on the clock, signed
 * afresh. A request that gets no answer (refused, reset, timed out, interrupted) is a failure's reason; one the
 * address policy refused at connect time, a permanent refusal's (src/domain/launch-answer.ts).
 */
async function askTarget(
  deps: HttpDeps,
  config: HttpConfig,
  mode: 'sync' | 'callback',
  request: Request,
  limits: { timeoutSeconds: number; acceptTimeoutMs: number; excerptBytes: number; tenantId: string },
  log: Deps['logger'],
): Promise<TargetAnswer> {
  const { sign, stillOurs, list, interrupt } = request;
  const deadline = new Date(deps.clock.now().getTime() + limits.timeoutSeconds * 1000);
  for (let resends = 0; ; resends++) {
    const left = Math.max(1, deadline.getTime() - deps.clock.now().getTime());
    const timeoutMs = mode === 'sync' ? left : Math.min(limits.acceptTimeoutMs, left);
    let answer: PostAnswer;
    try {
      const { headers, body } = sign();
      answer = await guardedPost(config.url, headers, body, { timeoutMs, limit: limits.excerptBytes, list, signal: interrupt, statusOnlyIf2xx: mode === 'callback' });
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const reason = interrupt.aborted
        ? INTERRUPTED
        : error instanceof TargetNotAllowedError
          ? launchRefusalError({ kind: 'address_not_allowed', host: error.host, address: error.address })
          : timedOut
            ? `timed out after ${mode === 'sync' ? limits.timeoutSeconds : Math.round(timeoutMs / 1000)}s`
            : `request failed: ${describeFetchError(error)}`;
      return { kind: 'failed', reason };
    }
    const wait = resendDelayMs(answer.status, answer.retryAfter, deps.clock.now(), deadline, resends);
    if (wait === undefined) return { kind: 'answer', status: answer.status, text: keptAnswer(answer, limits.tenantId), location: answer.location };
    log.info({ url: config.url, status: answer.status, waitMs: wait, resends: resends + 1 }, 'http launch answered with a Retry-After; sending it again then');
    await deps.clock.sleep(wait, interrupt);
    if (interrupt.aborted) return { kind: 'failed', reason: INTERRUPTED };
    if (!(await stillOurs())) return { kind: 'gone' };
  }
}

/** The launch request's body (LaunchRequestBody) and headers, signed with `secret`. */
function signedRequest(deps: HttpDeps, ctx: LaunchContext, config: HttpConfig, secret: string, mode: 'sync' | 'callback'): { headers: Record<string, string>; body: string } {
  const payload: LaunchRequestBody = {
    runId: ctx.runId,
    tenant: ctx.tenant.id,
    workflow: ctx.workflow.name,
    tick: ctx.tick ? ctx.tick.toISOString() : null,
    attempt: ctx.attempt,
    trigger: ctx.trigger,
    mode,
    timeoutSeconds: ctx.timeoutSeconds,
    callbackUrl: `${publicBaseUrl(deps.config)}/api/v1/runs/${ctx.runId}`,
    callbackToken: callbackTokenFor(secret, ctx.runId),
  };
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(deps.clock.now().getTime() / 1000);
  // A stored header the bot sets itself (Host, Content-Length, X-Scheduler-*: a row from before they were refused) is left out.
  const headers = launcherRequestHeaders(config.headers, {
    'content-type': 'application/json',
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: signLaunchRequest(secret, timestamp, body),
  });
  return { headers, body };
}

/** One launch request, signed afresh at each send; `interrupt` aborts it (the replica stopping). */
interface Request {
  sign: () => { headers: Record<string, string>; body: string };
  /** Takes the run's lease again before a re-send: false when the run ended or is another replica's. */
  stillOurs: () => Promise<boolean>;
  list: AllowList | undefined;
  interrupt: AbortSignal;
}

/**
 * Holds the run and takes its lease again right before the request. None to
 * take: the row ended or became another replica's since launchRun looked (a
 * stall on the allow-list read), so nothing is sent (false), and launchRun's
 * failing of a refused launch finds the row ended and changes nothing. A
 * database failure here does not stop the launch: launchRun has just looked.
 */
async function holdForRequest(deps: HttpDeps, held: HeldRuns, runId: number, log: Deps['logger']): Promise<boolean> {
  held.add(runId);
  if (await holdsLease(deps, runId, log)) return true;
  held.release(runId);
  return false;
}

/** Takes the run's lease (again); false only when the row says it is no longer this replica's to send. */
async function holdsLease(deps: HttpDeps, runId: number, log: Deps['logger']): Promise<boolean> {
  const taken = await takeRunLease(deps, runId, deps.clock.now()).catch((error) => log.warn({ err: error }, 'could not take the run lease'));
  return taken !== 0;
}

/**
 * The answer's body as kept: secrets go before any cut, the one at the size
 * limit (a half secret is one no redactor finds) and the error's first line.
 */
function keptAnswer(answer: PostAnswer, tenantId: string): string {
  return redactSecrets(answer.text, tenantId, { end: answer.truncated }) + (answer.truncated ? '\n[… truncated]' : '');
}

/** A sync target may answer JSON with what it knows about the run. */
function reportedDetails(text: string): Pick<RunOutcome, 'rows' | 'stage' | 'logUrl'> {
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (!parsed || typeof parsed !== 'object') return {};
    return {
      // What the API refuses (a negative count, a link that is not http(s)) is dropped from an answer too.
      rows: Number.isSafeInteger(parsed.rows) && (parsed.rows as number) >= 0 ? (parsed.rows as number) : null,
      stage: typeof parsed.stage === 'string' ? parsed.stage.slice(0, 200) : null,
      logUrl: typeof parsed.logUrl === 'string' && isWebLink(parsed.logUrl) ? parsed.logUrl : null,
    };
  } catch {
    return {};
  }
}

function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}
