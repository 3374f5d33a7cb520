package state

import (
	"cmp"
	"slices"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
)

// RegisterShardCmd records a shard cluster, or refreshes the record of one
// that registered before: members, capacity and version are replaced, the
// first registration time is kept. Registering is what a shard does on
// every start, so it must be idempotent. The proposer has validated and
// normalized the registration.
type RegisterShardCmd struct {
	Shard ShardRegistration `json:"shard"`
}

func applyRegisterShard(tx *replica.Tx, c *RegisterShardCmd) (RegisteredShard, error) {
	var rec RegisteredShard
	if !must(getJSON(tx, layout.Shard(c.Shard.ShardID), &rec)) {
		rec.RegisteredAt = tx.Now
	}
	rec.ID = c.Shard.ShardID
	rec.Members = c.Shard.Members
	rec.Capacity = c.Shard.Capacity
	rec.Version = c.Shard.Version
	rec.LastRegisteredAt = tx.Now
	mustSetJSON(tx, layout.Shard(rec.ID), rec)
	return rec, nil
}

func LoadRegisteredShard(r pebble.Reader, id string) (RegisteredShard, bool, error) {
	var rec RegisteredShard
	ok, err := getJSON(r, layout.Shard(id), &rec)
	return rec, ok, err
}

func ListRegisteredShards(r pebble.Reader) ([]RegisteredShard, error) {
	var out []RegisteredShard
	err := scanJSON(r, layout.Shards(), func(_ []byte, s RegisteredShard) { out = append(out, s) })
	return out, err
}

// Placement says how a create command chooses its namespace's shard. It
// travels in the command, so a command is replayed with the rule it was
// proposed under and every node, now or after a restart, places the
// namespace where it was placed the first time.
type Placement struct {
	// Shards are the statically configured shards (Config.Shards), which
	// differ between nodes' configurations and so are fixed by the
	// proposer.
	Shards []string `json:"shards"`
	// StaticCapacity is the capacity of each static shard that has not
	// also registered. Commands proposed before the shard registry existed
	// lack it (zero): they place on the static shards by fewest
	// namespaces, as they did then. Set, the candidates are the static
	// shards and every registered shard, ranked by namespaces/capacity.
	StaticCapacity uint64 `json:"static_capacity,omitempty"`
}

// candidate is a shard placement may choose and how full it is.
type candidate struct {
	id             string
	load, capacity uint64
}

// choose picks the shard for a new namespace.
func (p Placement) choose(r pebble.Reader) (string, error) {
	if p.StaticCapacity == 0 {
		return chooseFewest(r, p.Shards)
	}
	cands, err := p.candidates(r)
	if err != nil {
		panic(err)
	}
	if len(cands) == 0 {
		return "", apierr.Retry(apierr.Unavailable, 5, "no shard is available to place the namespace on")
	}
	best := -1
	for i, c := range cands {
		if c.load >= c.capacity {
			continue // full: its operator said it takes no more
		}
		if best < 0 || lessLoaded(c, cands[best]) {
			best = i
		}
	}
	if best < 0 {
		return "", apierr.Retry(apierr.Unavailable, 30, "every shard is at capacity; register another shard cluster")
	}
	return cands[best].id, nil
}

// lessLoaded compares namespaces/capacity by cross-multiplying, exact in
// integers (both factors stay far below 2^32 in practice, as capacity is
// capped at maxShardCapacity), ties by id.
func lessLoaded(a, b candidate) bool {
	x, y := a.load*b.capacity, b.load*a.capacity
	if x != y {
		return x < y
	}
	return a.id < b.id
}

// candidates lists the static and registered shards, sorted by id; a
// registered shard's own capacity wins over StaticCapacity.
func (p Placement) candidates(r pebble.Reader) ([]candidate, error) {
	byID := map[string]uint64{}
	for _, id := range p.Shards {
		byID[id] = p.StaticCapacity
	}
	reg, err := ListRegisteredShards(r)
	if err != nil {
		return nil, err
	}
	for _, s := range reg {
		byID[s.ID] = s.Capacity
	}
	out := make([]candidate, 0, len(byID))
	for id, capacity := range byID {
		// A tenant's self-hosted shard takes only the namespaces its
		// owner names it for, never a least-loaded choice.
		if owner, err := ShardOwner(r, id); err != nil {
			return nil, err
		} else if owner != "" {
			continue
		}
		load, err := getUint64(r, layout.ShardLoad(id))
		if err != nil {
			return nil, err
		}
		out = append(out, candidate{id: id, load: load, capacity: max(capacity, 1)})
	}
	slices.SortFunc(out, func(a, b candidate) int { return cmp.Compare(a.id, b.id) })
	return out, nil
}

// chooseFewest is the rule of commands from before the registry: the
// shard with the fewest namespaces, ties by id. Kept for their replay.
func chooseFewest(r pebble.Reader, shards []string) (string, error) {
	if len(shards) == 0 {
		return "", apierr.Retry(apierr.Unavailable, 5, "no shard is available to place the namespace on")
	}
	ids := slices.Sorted(slices.Values(shards))
	best, bestLoad := "", uint64(0)
	for _, id := range ids {
		load := must(getUint64(r, layout.ShardLoad(id)))
		if best == "" || load < bestLoad {
			best, bestLoad = id, load
		}
	}
	return best, nil
}
