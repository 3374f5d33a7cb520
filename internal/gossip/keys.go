package gossip

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/hashicorp/memberlist"
)

func newKeyring(keys [][]byte) (*memberlist.Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("gossip: Keys are required: gossip carries who leads each shard, and a pool anyone can join lets a stranger claim it")
	}
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	kr, err := memberlist.NewKeyring(cloneKeys(keys[1:]), bytes.Clone(keys[0]))
	if err != nil {
		return nil, fmt.Errorf("gossip: keyring: %w", err)
	}
	return kr, nil
}

func checkKeys(keys [][]byte) error {
	for i, k := range keys {
		if err := memberlist.ValidateKey(k); err != nil {
			return fmt.Errorf("gossip: key %d is %d bytes: %w", i+1, len(k), err)
		}
	}
	return nil
}

func cloneKeys(keys [][]byte) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = bytes.Clone(k)
	}
	return out
}

// SetKeys replaces the pool's keys while it runs: keys[0] encrypts from
// now on, every key in keys is accepted, and keys no longer listed are
// dropped.
func (p *Pool) SetKeys(keys [][]byte) error {
	if len(keys) == 0 {
		return errors.New("gossip: at least one key is required")
	}
	if err := checkKeys(keys); err != nil {
		return err
	}
	for _, k := range keys {
		if err := p.keyring.AddKey(bytes.Clone(k)); err != nil {
			return fmt.Errorf("gossip: add key: %w", err)
		}
	}
	if err := p.keyring.UseKey(keys[0]); err != nil {
		return fmt.Errorf("gossip: use key: %w", err)
	}
	for _, old := range p.keyring.GetKeys() {
		listed := false
		for _, k := range keys {
			listed = listed || bytes.Equal(k, old)
		}
		if !listed {
			if err := p.keyring.RemoveKey(old); err != nil {
				return fmt.Errorf("gossip: remove key: %w", err)
			}
		}
	}
	return nil
}
