package backup

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

func s3Config(srv s3Server) S3Config {
	return S3Config{
		Endpoint: srv.Endpoint, Bucket: s3Bucket, Prefix: "jobbie/", Region: s3Region,
		AccessKey: s3Access, SecretKey: s3Secret, TLS: srv.RootCAs != nil, RootCAs: srv.RootCAs,
		PartSize: 8 << 20,
	}
}

func TestS3Store(t *testing.T) {
	s, err := NewS3Store(s3Config(startS3Server(t, false)))
	if err != nil {
		t.Fatal(err)
	}
	testStore(t, s)

	// No object is left of refused or deleted puts, nor of multipart
	// uploads.
	var names []string
	for obj := range s.c.ListObjects(context.Background(), s3Bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		names = append(names, obj.Key)
	}
	if !equalStrings(names, []string{"jobbie/acme/prod/b1.jbk", "jobbie/acme/prod/b1.json"}) {
		t.Errorf("objects left: %v", names)
	}
	for up := range s.c.ListIncompleteUploads(context.Background(), s3Bucket, "", true) {
		t.Errorf("multipart upload left: %+v", up)
	}
}

func TestS3StoreTLS(t *testing.T) {
	srv := startS3Server(t, true)
	s, err := NewS3Store(s3Config(srv))
	if err != nil {
		t.Fatal(err)
	}
	data, m := writeStream(t, testHeader(), testRecords(100))
	ctx := context.Background()
	if _, err := s.Put(ctx, "t1/ns/b1", m, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if got := getAll(t, s, "t1/ns/b1"); !bytes.Equal(got, data) {
		t.Fatal("read back other bytes")
	}
	// Without the server's CA the connection is refused.
	cfg := s3Config(srv)
	cfg.RootCAs = nil
	plain, err := NewS3Store(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// minio-go retries a failed handshake: bound its backoff.
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := plain.Manifest(short, "t1/ns/b1"); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("an unverified server was trusted: %v", err)
	}
}

// Wrong credentials are refused by the server's signature check, and the
// store says so rather than "not found".
func TestS3StoreWrongSecret(t *testing.T) {
	srv := startS3Server(t, false)
	cfg := s3Config(srv)
	cfg.SecretKey = "wrong"
	s, err := NewS3Store(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data, m := writeStream(t, testHeader(), nil)
	_, err = s.Put(ctx, "t1/ns/b1", m, bytes.NewReader(data))
	if err == nil || minio.ToErrorResponse(errors.Unwrap(err)).StatusCode != http.StatusForbidden {
		t.Fatalf("put with a wrong secret: %v", err)
	}
	if _, err := s.Manifest(ctx, "t1/ns/b1"); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("manifest with a wrong secret: %v", err)
	}
}

func TestS3ConfigRefused(t *testing.T) {
	for name, cfg := range map[string]S3Config{
		"no endpoint":    {Bucket: "b"},
		"scheme":         {Endpoint: "http://127.0.0.1:9000", Bucket: "b"},
		"no bucket":      {Endpoint: "127.0.0.1:9000"},
		"absolute":       {Endpoint: "127.0.0.1:9000", Bucket: "b", Prefix: "/x/"},
		"tiny part size": {Endpoint: "127.0.0.1:9000", Bucket: "b", PartSize: 1 << 20},
	} {
		if _, err := NewS3Store(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
