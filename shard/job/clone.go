package job

import (
	"maps"
	"slices"
)

// Clone returns a copy of j that shares nothing mutable with it: the
// slices and the tag map that the engine changes in place are copied. The
// JSON fields (Payload, Progress, Checkpoint, Result, Chain) are shared,
// because the engine only ever replaces them, never writes into them.
func (j *Job) Clone() *Job {
	c := *j
	c.Errors = slices.Clone(j.Errors)
	if j.Timeline != nil { // with its spare room: the copy's next event fits
		c.Timeline = append(make([]Event, 0, cap(j.Timeline)), j.Timeline...)
	}
	c.DependsOn = slices.Clone(j.DependsOn)
	if j.Tags != nil {
		c.Tags = maps.Clone(j.Tags)
	}
	return &c
}
