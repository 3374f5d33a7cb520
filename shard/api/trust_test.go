package api

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// What a node takes as a JSON Web Key Set: an object with a "keys" array
// of objects (the route itself: shard.TestTrustPushAndRefusals).
func TestTrustCheckJWKS(t *testing.T) {
	for _, ok := range []string{
		`{"keys":[]}`,
		`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"AAAA"}]}`,
		` { "keys" : [ { "kid" : "a" } , {"kid":"b"} ] , "other" : 1 } `,
	} {
		require.NoError(t, checkJWKS(json.RawMessage(ok)), ok)
	}
	for raw, field := range map[string]string{
		``:                       "jwks",
		`null`:                   "jwks",
		`[]`:                     "jwks",
		`"x"`:                    "jwks",
		`{}`:                     "jwks.keys",
		`{"keys":null}`:          "jwks.keys",
		`{"keys":{}}`:            "jwks.keys",
		`{"keys":"k"}`:           "jwks.keys",
		`{"keys":[{},1]}`:        "jwks.keys[1]",
		`{"keys":[null]}`:        "jwks.keys[0]",
		`{"keys":[[{"kid":1}]]}`: "jwks.keys[0]",
	} {
		err := checkJWKS(json.RawMessage(raw))
		require.Error(t, err, raw)
		e := apierr.From(err)
		require.Equal(t, apierr.BadRequest, e.Code, raw)
		require.Equal(t, field, e.Field, raw)
	}
}

// A bundle is checked against the node's tenant and shard; what is not
// its own is refused with the field named.
func TestTrustCheckBundle(t *testing.T) {
	const tenant = "t_0123456789abcdefghijklmnop"
	s := &Server{cfg: Config{ShardID: "s1", Tenant: tenant}}
	good := func() wire.TrustBundle {
		return wire.TrustBundle{TenantID: tenant, ShardID: "s1", JWKS: json.RawMessage(`{"keys":[]}`),
			Revocations: wire.Revocations{Roles: []wire.RolesVersion{{TenantID: tenant, Version: 2}, {Version: 3}}},
			Namespaces:  []wire.NamespacePlacement{{ShardID: "s1"}, {ShardID: "s1"}}}
	}
	b := good()
	require.NoError(t, s.checkBundle(&b))
	for _, c := range []struct {
		change func(*wire.TrustBundle)
		code   apierr.Code
		field  string
	}{
		{func(b *wire.TrustBundle) { b.TenantID = "t_zzzzzzzzzzzzzzzzzzzzzzzzzz" }, apierr.Forbidden, "tenant_id"},
		{func(b *wire.TrustBundle) { b.ShardID = "s2" }, apierr.Forbidden, "shard_id"},
		{func(b *wire.TrustBundle) { b.JWKS = nil }, apierr.BadRequest, "jwks"},
		{func(b *wire.TrustBundle) { b.Namespaces[1].ShardID = "" }, apierr.BadRequest, "namespaces[1].shard_id"},
		{func(b *wire.TrustBundle) { b.Revocations.Roles[1].TenantID = "t_zz" }, apierr.BadRequest, "revocations.roles[1].tenant_id"},
	} {
		b := good()
		c.change(&b)
		e := apierr.From(s.checkBundle(&b))
		require.Equal(t, c.code, e.Code, c.field)
		require.Equal(t, c.field, e.Field)
	}
}
