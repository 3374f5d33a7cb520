module github.com/jobbie/jobbie/deploy/pod

go 1.26.8
