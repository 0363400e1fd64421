"""Backups of the platform's database and the way back from one (docs/operators/backups.md).

Two kinds, each recorded when it finishes (`records`, BackupSuccess), which the metric
petstore_backup_last_success_timestamp_seconds reports and PetstoreBackupStale watches:

- `pitr`: pgBackRest's base backup of the cluster (`manage.py basebackup`, by
  petstore-backup.timer), which with the WAL archive restores to any point in time;
- `logical`: a pg_dump of the database into a file of its owner's alone, sealed with a
  passphrase when asked (`manage.py backup`; `sealing`, `manage.py openbackup`), made by
  the pg_dump that fits the server (`clients`).

After a restore, `afterrestore` ends every session, moves every sequence past every id
handed out before it (the marks `manage.py idmarks` took from the database being replaced)
and empties the broker: docs/adr/0021-point-in-time-recovery-and-ids-never-reused.md.
"""
