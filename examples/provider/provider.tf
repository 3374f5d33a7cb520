terraform {
  required_providers {
    jobbie = {
      source = "jobbie/jobbie"
    }
  }
}

# endpoint and api_key default to the JOBBIE_URL and JOBBIE_API_KEY
# environment variables.
provider "jobbie" {
  endpoint  = "https://jobbie.example.com"
  api_key   = var.jobbie_api_key
  namespace = "emails"
}

variable "jobbie_api_key" {
  type      = string
  sensitive = true
}
