package backup

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3Store keeps backups.
type S3Config struct {
	Endpoint  string `json:"endpoint"` // host[:port], no scheme
	Bucket    string `json:"bucket"`
	Prefix    string `json:"prefix"` // prepended to every object name, e.g. "jobbie/"
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	Region    string `json:"region"` // empty: the client asks the server
	TLS       bool   `json:"tls"`
	// RootCAs verifies the server's certificate when TLS is on; nil means
	// the system's roots.
	RootCAs *x509.CertPool `json:"-"`
	// PartSize is the multipart upload part size, which is what Put holds in
	// memory at most. Zero means 16 MiB; S3 needs at least 5 MiB.
	PartSize uint64 `json:"part_size,omitempty"`
}

const defaultPartSize = 16 << 20

// S3Store keeps backups in an S3-compatible bucket: objects
// <prefix><id>.jbk (the stream) and <prefix><id>.json (the manifest).
type S3Store struct {
	c   *minio.Client
	cfg S3Config
}

// NewS3Store makes a store from cfg. It does not create the bucket.
func NewS3Store(cfg S3Config) (*S3Store, error) {
	switch {
	case cfg.Endpoint == "" || strings.Contains(cfg.Endpoint, "://"):
		return nil, fmt.Errorf("backup: s3 endpoint %q: want host[:port] without a scheme", cfg.Endpoint)
	case cfg.Bucket == "":
		return nil, errors.New("backup: s3 bucket is empty")
	case strings.HasPrefix(cfg.Prefix, "/"):
		return nil, fmt.Errorf("backup: s3 prefix %q must not start with '/'", cfg.Prefix)
	case cfg.PartSize != 0 && cfg.PartSize < 5<<20:
		return nil, fmt.Errorf("backup: s3 part size %d under S3's 5 MiB minimum", cfg.PartSize)
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = defaultPartSize
	}
	opts := &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.TLS,
		Region: cfg.Region,
	}
	if cfg.TLS && cfg.RootCAs != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
		opts.Transport = tr
	}
	c, err := minio.New(cfg.Endpoint, opts)
	if err != nil {
		return nil, fmt.Errorf("backup: s3 client: %w", err)
	}
	return &S3Store{c: c, cfg: cfg}, nil
}

func (s *S3Store) object(id, suffix string) string { return s.cfg.Prefix + id + suffix }

// notFound is true for S3's answers meaning no such object.
func notFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound
}

// Put implements Store. The data is uploaded in parts of PartSize, so at
// most one part is held in memory.
func (s *S3Store) Put(ctx context.Context, id string, m Manifest, data io.Reader) (int64, error) {
	if err := ValidateID(id); err != nil {
		return 0, err
	}
	_, err := s.c.StatObject(ctx, s.cfg.Bucket, s.object(id, manifestSuffix), minio.StatObjectOptions{})
	if err == nil {
		return 0, fmt.Errorf("%w: %q", ErrExists, id)
	} else if !notFound(err) {
		return 0, fmt.Errorf("backup: put %q: %w", id, err)
	}
	dobj := s.object(id, dataSuffix)
	verified, finish := verifyWhileStoring(ctxReader{ctx, data}, m)
	info, err := s.c.PutObject(ctx, s.cfg.Bucket, dobj, verified, -1,
		minio.PutObjectOptions{PartSize: s.cfg.PartSize, ContentType: "application/zstd"})
	uploaded := err == nil
	if m, err = finish(err); err != nil {
		if uploaded {
			// Stored but invalid: never visible, so not kept.
			s.c.RemoveObject(context.WithoutCancel(ctx), s.cfg.Bucket, dobj, minio.RemoveObjectOptions{})
		}
		return 0, fmt.Errorf("backup: put %q: %w", id, err)
	}
	mj, err := storedManifest(id, m, info.Size)
	if err != nil {
		return 0, err
	}
	_, err = s.c.PutObject(ctx, s.cfg.Bucket, s.object(id, manifestSuffix), bytes.NewReader(mj), int64(len(mj)),
		minio.PutObjectOptions{ContentType: "application/json"})
	if err != nil {
		return 0, fmt.Errorf("backup: put %q manifest: %w", id, err)
	}
	return info.Size, nil
}

// Get implements Store.
func (s *S3Store) Get(ctx context.Context, id string) (io.ReadCloser, error) {
	if _, err := s.Manifest(ctx, id); err != nil {
		return nil, err
	}
	obj, err := s.c.GetObject(ctx, s.cfg.Bucket, s.object(id, dataSuffix), minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat() // GetObject is lazy: surface a missing object now
		if err != nil {
			obj.Close()
		}
	}
	if err != nil {
		if notFound(err) {
			return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return nil, fmt.Errorf("backup: get %q: %w", id, err)
	}
	return obj, nil
}

// Manifest implements Store.
func (s *S3Store) Manifest(ctx context.Context, id string) (Manifest, error) {
	if err := ValidateID(id); err != nil {
		return Manifest{}, err
	}
	obj, err := s.c.GetObject(ctx, s.cfg.Bucket, s.object(id, manifestSuffix), minio.GetObjectOptions{})
	var b []byte
	if err == nil {
		b, err = io.ReadAll(io.LimitReader(obj, 2*MaxTrailerLen))
		obj.Close()
	}
	if err != nil {
		if notFound(err) {
			return Manifest{}, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return Manifest{}, fmt.Errorf("backup: manifest %q: %w", id, err)
	}
	return parseManifest(id, b)
}

// List implements Store.
func (s *S3Store) List(ctx context.Context, prefix string) ([]Manifest, error) {
	var out []Manifest
	for obj := range s.c.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.cfg.Prefix + prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("backup: list %q: %w", prefix, obj.Err)
		}
		id, ok := strings.CutSuffix(strings.TrimPrefix(obj.Key, s.cfg.Prefix), manifestSuffix)
		if !ok || ValidateID(id) != nil {
			continue
		}
		m, err := s.Manifest(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue // deleted while listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("backup: list %q: %w", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Delete implements Store. The manifest goes first, so the backup stops
// being visible before its data goes.
func (s *S3Store) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	mobj := s.object(id, manifestSuffix)
	if _, err := s.c.StatObject(ctx, s.cfg.Bucket, mobj, minio.StatObjectOptions{}); err != nil {
		if notFound(err) {
			return fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return fmt.Errorf("backup: delete %q: %w", id, err)
	}
	if err := s.c.RemoveObject(ctx, s.cfg.Bucket, mobj, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("backup: delete %q: %w", id, err)
	}
	if err := s.c.RemoveObject(ctx, s.cfg.Bucket, s.object(id, dataSuffix), minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("backup: delete %q: %w", id, err)
	}
	return nil
}
