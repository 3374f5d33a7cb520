package connectapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// jsonNames are the JSON names of t's fields, those of embedded structs
// inline, as encoding/json reads them.
func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			names = append(names, jsonNames(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// Search's request carries every filter and page field of POST
// /api/v1/jobs/search, by the HTTP API's names: a field the HTTP search
// gains and SearchRequest lacks fails here.
func TestSearchRequestHasEveryHTTPField(t *testing.T) {
	t.Parallel()
	fields := (&jobbiev1.SearchRequest{}).ProtoReflect().Descriptor().Fields()
	for _, name := range jsonNames(reflect.TypeFor[wire.SearchRequest]()) {
		require.NotNil(t, fields.ByName(protoreflect.Name(name)), "the HTTP search's %q has no SearchRequest field", name)
	}
}

// A Search with filters set reaches the route as the JSON the route
// reads, field for field, and the held jobs it finds say which budget
// holds them. The real route is tested against jobbie dev
// (cmd/jobbie/grpc_dev_test.go).
func TestSearchSendsItsFilters(t *testing.T) {
	t.Parallel()
	var got *Request
	page, _ := json.Marshal(wire.SearchPage{Jobs: []wire.SearchJob{{JobDetail: wire.JobDetail{ID: "j1", Queue: "llm",
		State: wire.StateHeld, HeldReason: wire.HeldReasonBudget, HeldBudget: "daily"}}}})
	s := New(func(r *Request) Answer {
		got = r
		return Answer{Status: http.StatusOK, Body: page}
	}, WorkConfig{}, ScalerConfig{})
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	attempts := int32(2)
	res, err := s.Search(context.Background(), connect.NewRequest(&jobbiev1.SearchRequest{
		Queue: "llm", State: []string{wire.StateHeld}, HeldReason: wire.HeldReasonBudget, HeldBudget: "daily",
		CreatedAfter: timestamppb.New(since), AttemptMin: &attempts, Tags: map[string]string{"team": "a"}, Limit: 10}))
	require.NoError(t, err)

	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/api/v1/jobs/search", got.Path)
	var sent wire.SearchRequest
	dec := json.NewDecoder(bytes.NewReader(got.Body))
	dec.DisallowUnknownFields() // as the route reads it: an unknown field is its 400
	require.NoError(t, dec.Decode(&sent), "%s", got.Body)
	two := 2
	require.Equal(t, wire.SearchRequest{SearchFilter: wire.SearchFilter{Queue: "llm", State: []string{wire.StateHeld},
		HeldReason: wire.HeldReasonBudget, HeldBudget: "daily", CreatedAfter: &since, AttemptMin: &two,
		Tags: map[string]string{"team": "a"}}, Limit: 10}, sent)

	require.Len(t, res.Msg.GetJobs(), 1)
	require.Equal(t, wire.HeldReasonBudget, res.Msg.GetJobs()[0].GetHeldReason())
	require.Equal(t, "daily", res.Msg.GetJobs()[0].GetHeldBudget())
}
