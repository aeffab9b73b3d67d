"""versitygw set up as the minio server httpfs's test files expect (scripts/minio_s3.yml and
scripts/set_s3_test_server_variables.sh in duckdb-httpfs): its credentials, region and buckets, on a free 127.0.0.1
port. No toxiproxy: the files count requests, not time."""

import json
import subprocess
from pathlib import Path

import boto3
from botocore.config import Config

from rig.paths import TOOLS_BIN
from rig.s3rig import LOOPBACK, ServerRig, free_ports

ACCESS_KEY = "minio_duckdb_user"
SECRET_KEY = "minio_duckdb_user_password"
# minio_s3.yml's second user, with the same rights (fully_qualified_s3_url.test writes with it).
SECOND_USER = ("minio_duckdb_user_2", "minio_duckdb_user_2_password")
REGION = "eu-west-1"
# The files address buckets in virtual-host style (httpfs's default): the processes that run them see DOMAIN and
# BUCKET.DOMAIN as 127.0.0.1 through a hosts file of their own (hosts_file), as CI adds them to /etc/hosts.
DOMAIN = "duckdb-minio.com"
# minio_s3.yml: test-bucket has versioning on, test-bucket-public is readable and writable without credentials.
BUCKETS = ("test-bucket", "test-bucket-2", "test-bucket-public")
VERSIONED_BUCKET = "test-bucket"
PUBLIC_BUCKET = "test-bucket-public"


def _public_policy(bucket: str) -> str:
    """What `mc anonymous set public` grants: anyone may list, read, write and delete."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": ["s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"],
                    "Resource": [f"arn:aws:s3:::{bucket}"],
                },
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": [
                        "s3:GetObject",
                        "s3:PutObject",
                        "s3:DeleteObject",
                        "s3:AbortMultipartUpload",
                        "s3:ListMultipartUploadParts",
                    ],
                    "Resource": [f"arn:aws:s3:::{bucket}/*"],
                },
            ],
        }
    )


class MinioStandIn(ServerRig):
    """Use as a context manager; `environment` is what set_s3_test_server_variables.sh exports."""

    workdir_prefix = "httpfs2-suite-"

    def _start(self):
        self.presigned = {}
        data = self._workdir / "data"
        versions = self._workdir / "versions"
        iam = self._workdir / "iam"
        for folder in (data, versions, iam):
            folder.mkdir()
        (self.port,) = free_ports(1)
        self._spawn(
            "versitygw",
            [
                str(TOOLS_BIN / "versitygw"),
                "--port",
                f"{LOOPBACK}:{self.port}",
                "--access-log",
                str(self.access_log_path),
                "--region",
                REGION,
                "--access",
                ACCESS_KEY,
                "--secret",
                SECRET_KEY,
                "--virtual-domain",
                DOMAIN,
                "--iam-dir",
                str(iam),
                "posix",
                "--versioning-dir",
                str(versions),
                str(data),
            ],
            self.port,
        )
        self._add_user(*SECOND_USER)
        self.s3 = boto3.client(
            "s3",
            endpoint_url=f"http://{self.endpoint}",
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
            # SigV4 also for presigned URLs (as `mc share`), which boto3 would otherwise sign the old way.
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}, signature_version="s3v4"),
        )
        for bucket in BUCKETS:
            self.s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
        self.s3.put_bucket_versioning(Bucket=VERSIONED_BUCKET, VersioningConfiguration={"Status": "Enabled"})
        self.s3.put_bucket_policy(Bucket=PUBLIC_BUCKET, Policy=_public_policy(PUBLIC_BUCKET))

    def put_presigned(self, variable: str, key: str, data: bytes):
        """Uploads `data` to test-bucket and names a presigned GET URL of it in `environment` as `variable` (as the
        setup of minio_s3.yml does with `mc share download`)."""
        self.s3.put_object(Bucket=VERSIONED_BUCKET, Key=key, Body=data)
        params = {"Bucket": VERSIONED_BUCKET, "Key": key}
        self.presigned[variable] = self.s3.generate_presigned_url("get_object", Params=params, ExpiresIn=3600)

    def _add_user(self, access_key: str, secret_key: str):
        """A user of the admin role (all buckets), as `mc admin policy attach readwrite` gives minio's users."""
        admin = [str(TOOLS_BIN / "versitygw"), "admin", "--access", ACCESS_KEY, "--secret", SECRET_KEY]
        admin += ["--region", REGION, "--endpoint-url", f"http://{self.endpoint}"]
        subprocess.run(
            [*admin, "create-user", "--access", access_key, "--secret", secret_key, "--role", "admin"],
            check=True,
            capture_output=True,
            timeout=30,
        )

    @property
    def endpoint(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    @property
    def access_log_path(self) -> Path:
        """One line per S3 request served (rig.s3rig.count_requests reads it)."""
        return self._workdir / "access.log"

    def hosts_file(self) -> str:
        """/etc/hosts for the processes that run the files: the names of the server and of its buckets."""
        names = " ".join([DOMAIN, *(f"{bucket}.{DOMAIN}" for bucket in BUCKETS)])
        path = self._workdir / "hosts"
        path.write_text(f"127.0.0.1 localhost\n{LOOPBACK} {names}\n")
        return str(path)

    @property
    def environment(self) -> dict:
        return {
            "S3_TEST_SERVER_AVAILABLE": "1",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "DUCKDB_S3_ENDPOINT": f"{DOMAIN}:{self.port}",
            "DUCKDB_S3_USE_SSL": "false",
            **self.presigned,
        }
