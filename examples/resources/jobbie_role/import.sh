# A custom role is imported by its name.
terraform import jobbie_role.support support
