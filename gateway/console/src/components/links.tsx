// Links to a job's and a queue's screens: most lists name both.
import type { ComponentChildren, JSX } from "preact";
import { jobPath, queuePath } from "../lib/paths";
import { Link } from "../router";
import { StateBadge } from "./ui";

type Anchor = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, "href">;

/** JobLink links job id's detail, its text the id unless children say otherwise. */
export function JobLink({ job, children, ...rest }: { job: string; children?: ComponentChildren } & Anchor) {
  return (
    <Link href={jobPath(job)} {...rest}>
      {children ?? job}
    </Link>
  );
}

/** JobCells are a job row's first cells: its id (linked), its queue (linked; unless queue is false: a list of one queue) and its state. */
export function JobCells(props: { job: string; queue: string | false; state: string }) {
  return (
    <>
      <td class="mono">
        <JobLink job={props.job} />
      </td>
      {props.queue !== false && (
        <td class="queue-cell">
          <QueueLink queue={props.queue} />
        </td>
      )}
      <td>
        <StateBadge state={props.state} />
      </td>
    </>
  );
}

/** QueueLink links queue name's detail, its text the name unless children say otherwise. */
export function QueueLink({ queue, children, ...rest }: { queue: string; children?: ComponentChildren } & Anchor) {
  return (
    <Link href={queuePath(queue)} {...rest}>
      {children ?? queue}
    </Link>
  );
}
