# A schedule is imported by <namespace>/<name> (its id, sch_…, works too).
terraform import jobbie_schedule.nightly emails/nightly
