package client

import (
	"bufio"
	"strings"
)

// sseFrame is one Server-Sent Events message.
type sseFrame struct {
	ID    string
	Event string // "message" when the frame names none
	Data  string // data lines joined by "\n"
}

// readSSE calls fn with each message of a Server-Sent Events stream until
// the stream ends (it returns the read error, io.EOF included) or fn
// returns an error (returned as is). Comments are skipped, and so are
// frames with neither data nor an event name (unlike the spec, a named
// event without data is delivered: a bare "event: done" means something).
// readEvents predates it and parses straight into Event;
// it could move onto this one.
func readSSE(rd *bufio.Reader, fn func(sseFrame) error) error {
	var f sseFrame
	var data []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if len(data) > 0 || f.Event != "" {
				f.Data = strings.Join(data, "\n")
				if f.Event == "" {
					f.Event = "message"
				}
				if err := fn(f); err != nil {
					return err
				}
			}
			f, data = sseFrame{}, data[:0]
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "id":
			f.ID = value
		case "event":
			f.Event = value
		case "data":
			data = append(data, value)
		}
	}
}
