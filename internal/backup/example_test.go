package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/jobbie/jobbie/internal/backup"
)

// A namespace's records are written to a stream, stored with their
// manifest, listed, and read back.
func Example() {
	var buf bytes.Buffer
	w, err := backup.NewWriter(&buf, backup.Header{
		Tenant: "acme", Namespace: "acme/prod", ShardID: "shard-1", RaftIndex: 4242,
		CreatedAt: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
		Kinds:     map[byte]string{'j': "jobs", 'q': "queues"},
	})
	if err != nil {
		log.Fatal(err)
	}
	w.Write(backup.Record{Kind: 'q', Key: []byte("qemails"), Value: []byte(`{"max_attempts":5}`)})
	w.Write(backup.Record{Kind: 'j', Key: []byte("jjob_01JD0000000000000000000001"), Value: []byte(`{"queue":"emails"}`)})
	m, err := w.Close(map[string]string{"trigger": "manual"})
	if err != nil {
		log.Fatal(err)
	}

	dir, _ := os.MkdirTemp("", "backups")
	defer os.RemoveAll(dir)
	store, _ := backup.NewDirStore(dir)
	ctx := context.Background()
	if _, err := store.Put(ctx, "acme/prod/01JD0000000000000000000001", m, &buf); err != nil {
		log.Fatal(err)
	}
	list, _ := store.List(ctx, "acme/prod/")
	fmt.Println(list[0].ID, list[0].Records, list[0].Counts)

	rc, _ := store.Get(ctx, list[0].ID)
	defer rc.Close()
	r, err := backup.NewReader(rc)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %s\n", rec.Key, rec.Value)
	}
	got, _ := r.Manifest()
	fmt.Println(got.SHA256 == m.SHA256)
	// Output:
	// acme/prod/01JD0000000000000000000001 2 map[jobs:1 queues:1]
	// qemails {"max_attempts":5}
	// jjob_01JD0000000000000000000001 {"queue":"emails"}
	// true
}
