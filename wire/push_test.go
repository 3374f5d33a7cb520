package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadPushAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		success bool
		body    string
		want    PushAnswer
		ok      bool
	}{
		{true, ``, PushAnswer{}, true},
		{true, `not json`, PushAnswer{}, true},
		{true, ` {"sent": 3} `, PushAnswer{Result: []byte(`{"sent": 3}`)}, true},
		{true, `[1,2]`, PushAnswer{Result: []byte(`[1,2]`)}, true},
		{true, `null`, PushAnswer{}, true},
		{true, `{}`, PushAnswer{Result: []byte(`{}`)}, true},
		{true, `{"result":{"sent":3},"progress":{"current":3,"total":3}}`,
			PushAnswer{Result: []byte(`{"sent":3}`), Progress: []byte(`{"current":3,"total":3}`)}, true},
		{true, `{"checkpoint":{"page":7}}`, PushAnswer{Checkpoint: []byte(`{"page":7}`)}, true},
		{true, `{"result":1,"other":2}`, PushAnswer{Result: []byte(`{"result":1,"other":2}`)}, true},
		{true, `{"result":{"result":1}}`, PushAnswer{Result: []byte(`{"result":1}`)}, true},
		{false, `{"error":"smtp timeout","backtrace":"at send","checkpoint":{"page":7}}`,
			PushAnswer{Error: "smtp timeout", Backtrace: "at send", Checkpoint: []byte(`{"page":7}`)}, true},
		{false, `{"error":"card declined","non_retryable":true}`, PushAnswer{Error: "card declined", NonRetryable: true}, true},
		{false, `{"non_retryable":true}`, PushAnswer{}, false},
		{true, `{"result":1,"non_retryable":true}`, PushAnswer{Result: []byte(`{"result":1,"non_retryable":true}`)}, true},
		{false, `{"error":5}`, PushAnswer{}, false},
		{false, `{"checkpoint":{"page":7}}`, PushAnswer{}, false},
		{false, `{"error":"x","result":1}`, PushAnswer{}, false},
		{false, `<html>Bad gateway</html>`, PushAnswer{}, false},
		{false, ``, PushAnswer{}, false},
	} {
		got, ok := ReadPushAnswer(tc.success, []byte(tc.body))
		require.Equal(t, tc.ok, ok, tc.body)
		require.Equal(t, tc.want, got, tc.body)
	}
}
