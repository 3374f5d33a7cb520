# The tenant's SSO configuration is imported by the id sso. The API never
# answers the client secret: the next apply sets the configuration's.
terraform import jobbie_sso.this sso
