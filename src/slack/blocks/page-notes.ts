import type { OnCallNote, PageRung, PageStep } from '../../domain/oncall-reach.js';
import type { PagePlan } from '../../domain/page-fallback.js';
import { groupMention, userMention } from './format.js';
import { onCallNoteText } from './oncall-notes.js';

const TAKE_IT = 'Take the alert here; `/scheduler oncall` shows who escalations reach.';
const RUNG: Record<PageStep, string> = { owner: 'the owner', tenant_oncall: 'the on-call', platform_oncall: "the platform's on-call" };

/**
 * The line a page carries once it fell back or reached nobody
 * (src/domain/page-fallback.ts), or undefined when it went as made. `names`:
 * the line names whom it pages (a page whose text has no "Paging …" words of
 * its own, an owner's reminder).
 */
export function pagePlanLine(plan: PagePlan, names: boolean): string | undefined {
  switch (plan.kind) {
    case 'as_made':
      return undefined;
    case 'fell_back': {
      const who = names ? `, ${[...plan.mention.groups.map(groupMention), ...plan.mention.users.map(userMention)].join(', ')}` : '';
      const to = plan.to === 'platform_oncall' ? "paging the platform's on-call" : 'paging the on-call instead';
      return `:information_source: ${whyOf(plan.passed)}: ${to}${who}.`;
    }
    case 'platform_paged':
      return `:information_source: ${whyOf(plan.passed)}: the platform's on-call was paged.`;
    case 'nobody': {
      // The tenant's channel, as before the fallback: what its names are; the platform channel: every rung.
      if (!plan.noPlatformOnCall && plan.passed.every((r) => r.step !== 'platform_oncall')) {
        return `:warning: Nobody was notified: ${plan.passed.flatMap((r) => r.reach.notes.map(onCallNoteText)).join('; ')}. ${TAKE_IT}`;
      }
      const rungs = plan.passed.map((r) => `${RUNG[r.step]}: ${r.reach.notes.map(onCallNoteText).join('; ')}`);
      if (plan.noPlatformOnCall) rungs.push("the platform's on-call: none is set (`PLATFORM_ONCALL`)");
      return `:warning: Nobody was notified: ${rungs.join('; ')}. ${TAKE_IT}`;
    }
  }
}

/** Why the rungs passed over reach nobody, as the thread is told ("@alice's account is deactivated"). */
function whyOf(passed: readonly PageRung[]): string {
  return passed.flatMap((r) => r.reach.notes.map(noteText)).join('; ');
}

function noteText(n: OnCallNote): string {
  return n.kind === 'user_unfit' && n.why === 'deactivated' ? `${userMention(n.user)}'s account is deactivated` : onCallNoteText(n);
}
