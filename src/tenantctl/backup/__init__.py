"""A tenant's control-plane data taken out of its DataStore and brought back: the export, the bundle it is
written as, its encryption and the S3 store it is kept in. Nothing here talks to Kubernetes: the day-two
reader (`operator/daytwo/backup.py`) gathers what a backup needs from the management cluster."""
