package controlfake

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Placement is where the fake control says a namespace lives, and its
// settings.
type Placement struct {
	ShardID, Addr string
	Members       []string
	Settings      wire.Namespace
	Moving        bool // a live move of it runs
	Unjoined      bool // on a self-hosted shard no node joined
}

// view is the namespace as control shows it.
func (pl Placement) view(name string) wire.Namespace {
	v := pl.Settings
	v.Name = name
	if v.CreatedAt.IsZero() {
		v.CreatedAt = Jan(1)
	}
	return v
}

func (fc *Control) Namespace(_ context.Context, _, tid, ns string) (wire.NamespacePlacement, error) {
	tid, ns = strings.Clone(tid), strings.Clone(ns)
	fc.PlacementCalls.Add(1)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.NamespacePlacement{}, err
	}
	pl, ok := fc.namespaces[tid][ns]
	if !ok {
		return wire.NamespacePlacement{}, refuse(apierr.New(apierr.NotFound, "namespace not found"))
	}
	return clone(wire.NamespacePlacement{Namespace: pl.view(ns), ShardID: pl.ShardID, ShardAddr: pl.Addr,
		ShardMembers: pl.Members, Moving: pl.Moving, Unjoined: pl.Unjoined}), nil
}

func (fc *Control) ListNamespaces(_ context.Context, _, tid string) (wire.NamespaceList, error) {
	tid = strings.Clone(tid)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.NamespaceList{}, err
	}
	out := wire.NamespaceList{Namespaces: []wire.Namespace{}}
	for name, pl := range fc.namespaces[tid] {
		out.Namespaces = append(out.Namespaces, pl.view(name))
	}
	slices.SortFunc(out.Namespaces, func(a, b wire.Namespace) int { return strings.Compare(a.Name, b.Name) })
	return clone(out), nil
}

func (fc *Control) CreateNamespace(ctx context.Context, _, tid string, in controlapi.NewNamespace) (wire.Namespace, error) {
	tid = strings.Clone(tid)
	return keyed(fc, ctx, tid, "namespaces", func() (wire.Namespace, error) { return fc.createNamespace(tid, in) })
}

func (fc *Control) createNamespace(tid string, in controlapi.NewNamespace) (wire.Namespace, error) {
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.Namespace{}, err
	}
	fc.Shards.LastPlacedOn = in.Shard
	if _, ok := fc.namespaces[tid][in.Name]; ok {
		return wire.Namespace{}, refuse(apierr.New(apierr.Conflict, "namespace %q exists", in.Name))
	}
	settings := wire.Namespace{Name: in.Name, Description: in.Description, DeletionProtection: in.DeletionProtection, CreatedAt: Jan(2)}
	_ = json.Unmarshal(in.Retention, &settings.Retention)
	id, addr := "s-new", "127.0.0.1:1"
	if fc.newShardAddr != "" {
		id, addr = "s1", fc.newShardAddr
	}
	fc.placeLocked(tid, in.Name, Placement{ShardID: id, Addr: addr, Settings: settings})
	return clone(settings), nil
}

func (fc *Control) UpdateNamespace(_ context.Context, _, tid, name string, in wire.UpdateNamespaceRequest) (wire.Namespace, error) {
	tid, name = strings.Clone(tid), strings.Clone(name)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.Namespace{}, err
	}
	pl, ok := fc.namespaces[tid][name]
	if !ok {
		return wire.Namespace{}, refuse(apierr.New(apierr.NotFound, "namespace not found"))
	}
	in = clone(in)
	fc.lastPatch = in
	v := pl.view(name)
	if len(in.Description) > 0 && json.Unmarshal(in.Description, &v.Description) != nil {
		return wire.Namespace{}, refuse(apierr.Field("description", "description must be a string"))
	}
	if len(in.Retention) > 0 {
		v.Retention = ""
		_ = json.Unmarshal(in.Retention, &v.Retention)
	}
	if len(in.DeletionProtection) > 0 {
		v.DeletionProtection = false
		_ = json.Unmarshal(in.DeletionProtection, &v.DeletionProtection)
	}
	pl.Settings = v
	fc.namespaces[tid][name] = pl
	return clone(v), nil
}

func (fc *Control) DeleteNamespace(_ context.Context, _, tid, name string) error {
	tid, name = strings.Clone(tid), strings.Clone(name)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return err
	}
	pl, ok := fc.namespaces[tid][name]
	switch {
	case !ok:
		return refuse(apierr.New(apierr.NotFound, "namespace not found"))
	case pl.Settings.DeletionProtection:
		return refuse(apierr.New(apierr.DeletionProtected, "protected"))
	}
	delete(fc.namespaces[tid], name)
	return nil
}

// AddNamespace places a namespace on shard id, known by one address.
func (fc *Control) AddNamespace(tid, ns, id, shardAddr string) {
	fc.Lock()
	defer fc.Unlock()
	fc.placeLocked(tid, ns, Placement{ShardID: id, Addr: shardAddr})
}

// Place puts a namespace on shard cluster id with these members (control
// gives the first as shard_addr).
func (fc *Control) Place(tid, ns, id string, members ...string) {
	fc.Lock()
	defer fc.Unlock()
	fc.placeLocked(tid, ns, Placement{ShardID: id, Addr: members[0], Members: members})
}

func (fc *Control) placeLocked(tid, ns string, pl Placement) {
	if fc.namespaces[tid] == nil {
		fc.namespaces[tid] = map[string]Placement{}
	}
	fc.namespaces[tid][ns] = pl
}

// change changes namespace ns of tenant tid with f.
func (fc *Control) change(tid, ns string, f func(*Placement)) {
	fc.Lock()
	defer fc.Unlock()
	pl := fc.namespaces[tid][ns]
	f(&pl)
	fc.namespaces[tid][ns] = pl
}

// Protect sets a namespace's deletion protection.
func (fc *Control) Protect(tid, ns string, on bool) {
	fc.change(tid, ns, func(pl *Placement) { pl.Settings.DeletionProtection = on })
}

// Move says whether a live move of a namespace runs.
func (fc *Control) Move(tid, ns string, on bool) {
	fc.change(tid, ns, func(pl *Placement) { pl.Moving = on })
}

// Unjoin says the namespace is on a self-hosted shard no node joined.
func (fc *Control) Unjoin(tid, ns string) {
	fc.change(tid, ns, func(pl *Placement) { pl.Unjoined = true })
}

// PlaceNewOn places the namespaces created from now on on shard s1, at addr.
func (fc *Control) PlaceNewOn(addr string) {
	fc.Lock()
	defer fc.Unlock()
	fc.newShardAddr = addr
}

// NamespaceSettings is a namespace's settings as control keeps them.
func (fc *Control) NamespaceSettings(tid, ns string) wire.Namespace {
	fc.Lock()
	defer fc.Unlock()
	return fc.namespaces[tid][ns].Settings
}

// HasNamespace reports whether control knows the namespace.
func (fc *Control) HasNamespace(tid, ns string) bool {
	fc.Lock()
	defer fc.Unlock()
	_, ok := fc.namespaces[tid][ns]
	return ok
}

// LastPatchRequest is the last namespace update control was sent.
func (fc *Control) LastPatchRequest() wire.UpdateNamespaceRequest {
	fc.Lock()
	defer fc.Unlock()
	return fc.lastPatch
}
