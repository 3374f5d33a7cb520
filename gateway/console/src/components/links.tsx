// Links to a job's and a queue's screens: most lists name both.
import type { ComponentChildren, JSX } from "preact";
import { jobPath, queuePath } from "../lib/paths";
import { Link } from "../router";

type Anchor = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, "href">;

/** JobLink links job id's detail, its text the id unless children say otherwise. */
export function JobLink({ job, children, ...rest }: { job: string; children?: ComponentChildren } & Anchor) {
  return (
    <Link href={jobPath(job)} {...rest}>
      {children ?? job}
    </Link>
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
