package state

import (
	"slices"

	"github.com/jobbie/jobbie/wire"
)

// The lifecycles of moves and backups, one table each: which state
// follows which for every step. The apply functions refuse a change the
// table does not list, and the leader's runners ask the table for the
// state a step leads to rather than choosing it. Commands that carry a
// target state (move_progress, finish_backup, finish_restore) are read as
// the step whose target it is: exactly the targets the runners send.
//
//	copying ──copied──▶ catching_up ──copied──▶ catching_up
//	catching_up ──fence──▶ fenced ──commit──▶ fenced ──switch──▶ switched ──complete──▶ completed
//	copying, catching_up, fenced ──fail──▶ failed   (──cancel──▶ cancelled, once a cancel was asked)
//
//	(backup) running ──succeed──▶ completed, running ──fail──▶ failed
//	(restore) running ──succeed──▶ completed, running ──fail──▶ failed

// MoveStep is a step of a move.
type MoveStep string

// The steps of a move.
const (
	MoveStart    MoveStep = "start"    // the move is recorded
	MoveCopied   MoveStep = "copied"   // the snapshot or a delta reached the target
	MoveFence    MoveStep = "fence"    // the source holds writes
	MoveCommit   MoveStep = "commit"   // the last delta is copied: no cancel from here
	MoveSwitch   MoveStep = "switch"   // placement names the target
	MoveComplete MoveStep = "complete" // the source's copy is removed
	MoveFail     MoveStep = "fail"     // cleaned up before the switch
	MoveCancel   MoveStep = "cancel"   // cleaned up before the switch, as an operator asked
)

// moveSteps is the move lifecycle: for each step, the state it leaves
// from and the state it leads to. "" is before the move is recorded.
var moveSteps = map[MoveStep]map[string]string{
	MoveStart:    {"": wire.MoveCopying},
	MoveCopied:   {wire.MoveCopying: wire.MoveCatchingUp, wire.MoveCatchingUp: wire.MoveCatchingUp},
	MoveFence:    {wire.MoveCatchingUp: wire.MoveFenced},
	MoveCommit:   {wire.MoveFenced: wire.MoveFenced},
	MoveSwitch:   {wire.MoveFenced: wire.MoveSwitched},
	MoveComplete: {wire.MoveSwitched: wire.MoveCompleted},
	MoveFail:     {wire.MoveCopying: wire.MoveFailed, wire.MoveCatchingUp: wire.MoveFailed, wire.MoveFenced: wire.MoveFailed},
	MoveCancel:   {wire.MoveCopying: wire.MoveCancelled, wire.MoveCatchingUp: wire.MoveCancelled, wire.MoveFenced: wire.MoveCancelled},
}

// MoveNext is the state step leads a move in state from to, and whether
// the lifecycle allows the step there at all.
func MoveNext(from string, step MoveStep) (string, bool) {
	to, ok := moveSteps[step][from]
	return to, ok
}

// MoveStates are every state of a move, in lifecycle order.
var MoveStates = []string{wire.MoveCopying, wire.MoveCatchingUp, wire.MoveFenced, wire.MoveSwitched,
	wire.MoveCompleted, wire.MoveCancelled, wire.MoveFailed}

// MoveEnded reports whether a move in state s is over: no step leaves it.
func MoveEnded(s string) bool {
	for _, from := range moveSteps {
		if _, ok := from[s]; ok {
			return false
		}
	}
	return slices.Contains(MoveStates, s)
}

// progressStep is the step a move_progress command records, read from
// the target state and marks it carries; false for a combination no
// runner sends.
func progressStep(c *MoveProgressCmd) (MoveStep, bool) {
	switch {
	case c.State == wire.MoveCatchingUp && !c.Fenced && !c.Committing:
		return MoveCopied, true
	case c.State == wire.MoveFenced && c.Fenced && !c.Committing:
		return MoveFence, true
	case c.State == wire.MoveFenced && c.Committing && !c.Fenced:
		return MoveCommit, true
	}
	return "", false
}

// ProgressCmd is the move_progress command that records step of move m
// with its counters: the table gives the state it leads to (false if it
// allows no such step from m's state).
func ProgressCmd(m MoveRecord, step MoveStep) (MoveProgressCmd, bool) {
	to, ok := MoveNext(m.State, step)
	c := MoveProgressCmd{ID: m.ID, State: to, Rounds: m.Rounds, Records: m.Records, Bytes: m.Bytes,
		Fenced: step == MoveFence, Committing: step == MoveCommit}
	if _, known := progressStep(&c); !known {
		ok = false
	}
	return c, ok
}

// RunStep is a step of a backup's or a restore's run.
type RunStep string

// The steps of a run.
const (
	RunStart   RunStep = "start"
	RunSucceed RunStep = "succeed"
	RunFail    RunStep = "fail"
)

// runSteps is the lifecycle of a backup, and of a restore from one.
var runSteps = map[RunStep]map[string]string{
	RunStart:   {"": wire.BackupRunning},
	RunSucceed: {wire.BackupRunning: wire.BackupCompleted},
	RunFail:    {wire.BackupRunning: wire.BackupFailed},
}

// RunNext is the state step leads a backup or restore in state from to,
// and whether the lifecycle allows the step there.
func RunNext(from string, step RunStep) (string, bool) {
	to, ok := runSteps[step][from]
	return to, ok
}

// finishStep is the step a finish_backup or finish_restore command
// records, read from the target state it carries.
func finishStep(to string) (RunStep, bool) {
	for step, from := range runSteps {
		if from[wire.BackupRunning] == to && step != RunStart {
			return step, true
		}
	}
	return "", false
}

// RunEnd is the state a run ends in: completed, or failed when err is
// set.
func RunEnd(err error) string {
	step := RunSucceed
	if err != nil {
		step = RunFail
	}
	to, _ := RunNext(wire.BackupRunning, step)
	return to
}
