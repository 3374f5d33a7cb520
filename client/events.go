package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/jobbie/jobbie/wire"
)

// Event is one lifecycle event of a job in the namespace's event stream:
// the event's data (wire.Event; Type is one of the wire.Event* types,
// From is "" for a new job, WorkerID is set on "started"), its stream id
// and whether events were missed before it. ID and Missed come from the
// stream, not the data, so they are never JSON.
type Event struct {
	wire.Event
	// ID orders events; pass the last one seen to Events to resume.
	ID string `json:"-"`
	// Missed is set on the first event after a gap: the server no longer
	// had every event after the id the stream resumed from.
	Missed bool `json:"-"`
}

// Events opens the namespace's event stream. With lastEventID "" it starts
// with the next event; with an event's ID it resumes after that event. The
// channel closes when ctx ends or the stream breaks; to go on, call Events
// again with the ID of the last event received.
func (c *Client) Events(ctx context.Context, lastEventID string) (<-chan Event, error) {
	req, err := c.newRequest(ctx, "GET", "/api/v1/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set(wire.LastEventIDHeader, lastEventID)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jobbie: GET /api/v1/events: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer drain(resp.Body)
		return nil, parseError(resp)
	}
	out := make(chan Event)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		readEvents(ctx, bufio.NewReader(resp.Body), out)
	}()
	return out, nil
}

// readEvents parses Server-Sent Events frames into out until the stream
// or ctx ends.
func readEvents(ctx context.Context, rd *bufio.Reader, out chan<- Event) {
	var ev Event
	var data, typ string
	missed := false
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		switch {
		case line == "":
			if typ == "" || data == "" {
				data, typ = "", ""
				continue
			}
			if json.Unmarshal([]byte(data), &ev.Event) == nil {
				ev.Type, ev.Missed = typ, missed
				missed = false
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
			ev, data, typ = Event{}, "", ""
		case strings.HasPrefix(line, ":"):
			if strings.Contains(line, "events were missed") {
				missed = true
			}
		case strings.HasPrefix(line, "id:"):
			ev.ID = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "event:"):
			typ = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimPrefix(line[5:], " ")
		}
	}
}
