package client

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadSSE(t *testing.T) {
	t.Parallel()
	stream := ": comment\n\n" +
		"id: 7\nevent: progress\ndata: {\"a\":\ndata:1}\n\n" + // data lines join with \n
		"data: plain\r\n\r\n" +
		"event: done\n\n" +
		"\n\n" +
		"event: after\ndata: x\n" // no closing blank line: not delivered
	var got []sseFrame
	err := readSSE(bufio.NewReader(strings.NewReader(stream)), func(f sseFrame) error {
		got = append(got, f)
		return nil
	})
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, []sseFrame{
		{ID: "7", Event: "progress", Data: "{\"a\":\n1}"},
		{Event: "message", Data: "plain"},
		{Event: "done"},
	}, got)

	stop := errors.New("stop")
	err = readSSE(bufio.NewReader(strings.NewReader("data: 1\n\ndata: 2\n\n")), func(sseFrame) error { return stop })
	require.ErrorIs(t, err, stop)
}
