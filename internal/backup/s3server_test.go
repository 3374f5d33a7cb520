package backup

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// The S3 tests talk to a real S3-protocol server (gofakes3, in-memory
// backend) in a child process: this test binary run again with
// s3ServerEnv set. A child keeps its memory out of the large-object tests'
// measurements and is a real peer over a real socket. In front of gofakes3
// (which does not check signatures) the child verifies each request's AWS
// Signature V4, so wrong credentials fail as on a real S3.
const (
	s3ServerEnv = "BACKUP_TEST_S3_SERVER"
	s3Bucket    = "backups"
	s3Access    = "AKIAJOBBIETEST"
	s3Secret    = "c2VjcmV0LWtleS1mb3ItdGVzdHM"
	s3Region    = "us-east-1"
)

// s3Server is a running child server.
type s3Server struct {
	Endpoint string
	RootCAs  *x509.CertPool // when started with TLS
}

// startS3Server starts the child and stops it when t ends.
func startS3Server(t *testing.T, useTLS bool) s3Server {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), s3ServerEnv+"=1", "BACKUP_TEST_S3_TLS="+strconv.FormatBool(useTLS))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the child exits when its stdin closes
		if err := cmd.Wait(); err != nil {
			t.Errorf("s3 server: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("s3 server did not start: %v", err)
	}
	go io.Copy(io.Discard, stdout)
	addr, certB64, _ := strings.Cut(strings.TrimSpace(line), " ")
	srv := s3Server{Endpoint: addr}
	if useTLS {
		der, err := base64.StdEncoding.DecodeString(certB64)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		srv.RootCAs = x509.NewCertPool()
		srv.RootCAs.AddCert(cert)
	}
	return srv
}

// serveS3 is the child: it serves until its stdin closes.
func serveS3() {
	backend := s3mem.New()
	if err := backend.CreateBucket(s3Bucket); err != nil {
		panic(err)
	}
	faker := gofakes3.New(backend)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: sigV4(faker.Server()), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)} // TestS3StoreTLS fails handshakes on purpose
	line := ln.Addr().String()
	if os.Getenv("BACKUP_TEST_S3_TLS") == "true" {
		cert := selfSigned()
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		ln = tls.NewListener(ln, srv.TLSConfig)
		line += " " + base64.StdEncoding.EncodeToString(cert.Certificate[0])
	}
	go srv.Serve(ln)
	fmt.Println(line)
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
}

func selfSigned() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "s3 test server"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		panic(err)
	}
	cert, err := tls.X509KeyPair(
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	if err != nil {
		panic(err)
	}
	return cert
}

// sigV4 refuses requests whose AWS Signature V4 does not verify with the
// test credentials. A body sent in signed aws-chunked encoding (minio-go's
// uploads over plain HTTP) has each chunk's signature checked as it
// streams, and reaches gofakes3 decoded, which gofakes3 only does itself
// for single-part uploads.
func sigV4(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sig, err := checkSigV4(r, s3Access, s3Secret)
		if err == nil && r.Header.Get("X-Amz-Content-Sha256") == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" {
			var n int64
			n, err = strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
			r.Body = struct {
				io.Reader
				io.Closer
			}{&chunkReader{br: bufio.NewReader(r.Body), sig: sig, prev: sig.seed}, r.Body}
			r.ContentLength = n
			r.Header.Set("Content-Length", strconv.FormatInt(n, 10))
			r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
			r.Header.Del("Content-Encoding")
		}
		if err != nil {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>%s</Message></Error>`, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// signature is a verified request signature, what its chunks chain from.
type signature struct {
	key         []byte // the signing key
	date, scope string
	seed        string
}

// chunkReader decodes a signed aws-chunked body, verifying each chunk's
// signature, chained from the one before.
type chunkReader struct {
	br   *bufio.Reader
	sig  signature
	prev string
	left int64
	want string
	h    hash.Hash
	done bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		line, err := c.br.ReadString('\n')
		if err != nil {
			return 0, err
		}
		size, sig, ok := strings.Cut(strings.TrimSpace(line), ";chunk-signature=")
		n, perr := strconv.ParseInt(size, 16, 64)
		if !ok || perr != nil || n < 0 {
			return 0, fmt.Errorf("bad chunk header %q", line)
		}
		c.left, c.want, c.h = n, sig, sha256.New()
		if n == 0 {
			c.done = true
			return 0, c.verify()
		}
	}
	n, err := c.br.Read(p[:min(int64(len(p)), c.left)])
	c.h.Write(p[:n])
	c.left -= int64(n)
	if err == nil && c.left == 0 {
		if crlf, _ := c.br.ReadString('\n'); crlf != "\r\n" {
			return n, errors.New("chunk not followed by CRLF")
		}
		err = c.verify()
	}
	return n, err
}

func (c *chunkReader) verify() error {
	empty := sha256.Sum256(nil)
	toSign := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.sig.date + "\n" + c.sig.scope + "\n" + c.prev + "\n" +
		hex.EncodeToString(empty[:]) + "\n" + hex.EncodeToString(c.h.Sum(nil))
	m := hmac.New(sha256.New, c.sig.key)
	m.Write([]byte(toSign))
	if got := hex.EncodeToString(m.Sum(nil)); !hmac.Equal([]byte(got), []byte(c.want)) {
		return errors.New("chunk signature does not match")
	}
	c.prev = c.want
	return nil
}

// checkSigV4 recomputes the request's signature (the header form, the
// only one minio-go sends here) as AWS documents it.
func checkSigV4(r *http.Request, access, secret string) (signature, error) {
	rest, ok := strings.CutPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ")
	if !ok {
		return signature{}, errors.New("no AWS4-HMAC-SHA256 authorization")
	}
	var cred, signed, sig string
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			sig = v
		}
	}
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[0] != access || scope[3] != "s3" || scope[4] != "aws4_request" {
		return signature{}, fmt.Errorf("unknown credential %q", cred)
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || scope[1] != t.Format("20060102") || time.Since(t).Abs() > 15*time.Minute {
		return signature{}, fmt.Errorf("bad or stale X-Amz-Date %q", amzDate)
	}
	var headers strings.Builder
	for _, h := range strings.Split(signed, ";") {
		v := strings.Join(r.Header.Values(h), ",")
		switch h {
		case "host":
			v = r.Host
		case "content-length":
			v = strconv.FormatInt(r.ContentLength, 10)
		}
		headers.WriteString(h + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = "UNSIGNED-PAYLOAD"
	}
	canonical := strings.Join([]string{
		r.Method, r.URL.EscapedPath(), strings.ReplaceAll(r.URL.Query().Encode(), "+", "%20"),
		headers.String(), signed, payload,
	}, "\n")
	ch := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(ch[:])
	key := []byte("AWS4" + secret)
	for _, part := range scope[1:] {
		key = hmacSHA256(key, part)
	}
	if !hmac.Equal([]byte(hex.EncodeToString(hmacSHA256(key, toSign))), []byte(sig)) {
		return signature{}, errors.New("signature does not match")
	}
	return signature{key: key, date: amzDate, scope: strings.Join(scope[1:], "/"), seed: sig}, nil
}

func hmacSHA256(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}
