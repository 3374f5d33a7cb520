// Package fairshare shares a small pool of work slots among keys (a
// tenant, a namespace) by weighted fair queueing, so that one key sending
// as much work as it can waits behind its own share of the pool, not
// everyone's.
//
// A Scheduler holds Config.Slots slots, sized to the cores: a request
// takes one for the CPU-bound part of its work (Acquire) and gives it
// back when that part is done (Slot.Release), before it waits on
// anything else. While every slot is taken, requests wait in one FIFO per
// key, and a freed slot goes to the waiting key that has used the least
// slot time for its weight (start-time fair queueing on virtual time: a
// key's virtual time grows by the time it held slots divided by its
// weight; a key that was idle starts at the pool's virtual time, so
// idleness earns no credit to flood with later). A key therefore gets
// its weighted share of the cores, a quiet key waits for at most the
// slots in use to free, and a key alone uses the whole pool
// (work-conserving). Config.PerKey bounds how many slots one key holds at
// once, for work whose every unit is long (a scan of a second).
//
// Waiting is bounded twice: a key may have at most Config.MaxWaiting
// requests waiting (times its weight), and a request waits at most
// Config.MaxWait. Past either, Acquire returns a *BusyError saying why;
// nothing was done, so sending it again later is safe. The HTTP layer
// turns it into 429 (the key's own load: it holds slots or fills its own
// queue) or 503 (others' load) with Retry-After.
//
// Proposals to a Raft group have their own fair admission
// (internal/replica, admit.go): it shares entry bytes among keys in
// deficit round-robin, a batch at a time. A slot pool shares time among
// keys one grant at a time, whose cost is known only once the slot comes
// back; the two meet where a request's work reaches the group's
// admission queue, where the request gives its slot back
// (replica.WithQueued).
package fairshare
