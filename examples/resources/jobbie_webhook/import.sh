# A webhook endpoint is imported by <namespace>/<id>; its secret is then
# null (the API shows it only when it is made: rotate it to get a new one).
terraform import jobbie_webhook.mail_outcomes billing/wh_01JD3X5B7Q2V8N4M6K9R0T1Y2Z
