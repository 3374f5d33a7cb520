// Command terraform-provider-jobbie is the Terraform provider for Jobbie
// (source address jobbie/jobbie). Terraform starts it; see
// docs/terraform.md for running it from a local build.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	provider "github.com/jobbie/jobbie/terraform-provider"
)

// version is set at release builds with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers like delve (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         provider.Address,
		Debug:           *debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err)
	}
}
