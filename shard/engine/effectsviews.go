package engine

// DropCommittedViews drops what the engine keeps of the committed state
// for readers outside the apply (queue records, restore and move marks),
// which load it again from the state, and moves the encryption epoch
// (the entry may have changed an encryption record: the service reads
// the records again). A member calls it after applying an
// entry as the leader's effects (replica.Registry.OnEffectsApplied): no
// handler ran here to keep them current. The caches only handlers read are
// reset (Engine.reset) before handlers next run.
func (e *Engine) DropCommittedViews() {
	e.queues.reset()
	e.marks.reset()
	e.movesAPI.reset()
	e.encEpoch.Add(1)
}
