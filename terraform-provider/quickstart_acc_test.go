package provider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobbie/jobbie/client"
)

// The newcomer's path of docs/terraform.md: the
// provider binary built, a CLI configuration with dev_overrides, and
// `terraform apply` (no init, offline) on examples/quickstart, then
// `terraform destroy`.
func TestAccQuickstartExample(t *testing.T) {
	accPreCheck(t)
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "terraform-provider-jobbie"), "../cmd/terraform-provider-jobbie")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the provider: %v\n%s", err, out)
	}
	rc := filepath.Join(dir, "dev.tfrc")
	writeFile(t, rc, fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"jobbie/jobbie\" = %q\n  }\n  direct {}\n}\n", bin))
	work := filepath.Join(dir, "work")
	main, err := os.ReadFile("../examples/quickstart/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "main.tf"), string(main))
	const ns = "quickstart" // the namespace it declares

	tf := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return out
	}
	tf("apply", "-auto-approve", "-input=false", "-no-color")
	var outputs map[string]struct{ Value any }
	if err := json.Unmarshal(tf("output", "-json"), &outputs); err != nil {
		t.Fatal(err)
	}
	key, _ := outputs["producer_key"].Value.(string)
	producer := client.New(gatewayURL, key, client.WithNamespace(ns))
	if _, err := producer.Enqueue(ctx(t), client.EnqueueRequest{Queue: "emails.digest"}); err != nil {
		t.Fatalf("the quickstart's producer key cannot enqueue: %v", err)
	}
	if _, err := producer.Enqueue(ctx(t), client.EnqueueRequest{Queue: "billing.charge"}); !client.IsForbidden(err) {
		t.Fatalf("the quickstart's producer key, outside emails.*: %v, want 403", err)
	}
	if outputs["digest_next_run"].Value == nil {
		t.Fatalf("no next run: %v", outputs)
	}
	if out := tf("plan", "-detailed-exitcode", "-input=false", "-no-color"); bytes.Contains(out, []byte("to change")) {
		t.Fatalf("a second plan is not empty:\n%s", out)
	}
	tf("destroy", "-auto-approve", "-input=false", "-no-color")
	if _, err := api().GetNamespace(ctx(t), ns); !client.IsNotFound(err) {
		t.Fatalf("namespace %s after destroy: %v", ns, err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
