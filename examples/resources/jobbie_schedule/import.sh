# A schedule is imported by <namespace>/<queue>/<name>, or by
# <namespace>/<name> while no other queue has a schedule of that name
# (its id, <namespace>/sch_…, works too).
terraform import jobbie_schedule.nightly emails/reports.generate/nightly
