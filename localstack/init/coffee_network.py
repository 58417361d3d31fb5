"""Creates the network the Coffee Manage sample database lives in, idempotently:
a VPC, two subnets in two availability zones, the DB subnet group `coffee-manage-db-subnets` and the
security group `coffee-manage-db-sg` (MySQL from inside the VPC); and the operator's event feed as
docs/events.md tells a user to set it up: the SQS queue `rds-operator-events`, its policy letting
EventBridge send to it, and the EventBridge rule `rds-operator-events` sending RDS's CloudTrail
records and instance events there.

Runs against any RDS/EC2 endpoint: moto (localstack/moto.sh start runs it), LocalStack (mounted as a
ready.d init hook by docker-compose.yml), or real AWS (unset AWS_ENDPOINT_URL). Prints the ids as
`key=value` lines; `--get security_group_id` prints just that value. `--event-feed NAME` sets up a
feed of that name alone, `--no-event-feed NAME` removes it, in the account and region of the
credentials and AWS_REGION in the environment (AWS_SESSION_TOKEN for an assumed role's).
"""

import json
import os
import sys

import boto3

NAME = "coffee-manage"
CIDR = "10.20.0.0/16"
SUBNETS = [("10.20.1.0/24", "a"), ("10.20.2.0/24", "b")]
SUBNET_GROUP = f"{NAME}-db-subnets"
SECURITY_GROUP = f"{NAME}-db-sg"
EVENTS = "rds-operator-events"
EVENT_PATTERN = {"source": ["aws.rds"], "detail-type": ["AWS API Call via CloudTrail", "RDS DB Instance Event"]}


def client(service: str):
    return boto3.client(
        service,
        endpoint_url=os.environ.get("AWS_ENDPOINT_URL", "http://localhost:4566") or None,
        region_name=os.environ.get("AWS_REGION", os.environ.get("AWS_DEFAULT_REGION", "us-east-1")),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
        aws_session_token=os.environ.get("AWS_SESSION_TOKEN") or None,
    )


def ensure() -> dict:
    ec2, rds = client("ec2"), client("rds")
    region = ec2.meta.region_name
    vpcs = ec2.describe_vpcs(Filters=[{"Name": "tag:Name", "Values": [f"{NAME}-vpc"]}])["Vpcs"]
    if vpcs:
        vpc_id = vpcs[0]["VpcId"]
    else:
        vpc_id = ec2.create_vpc(
            CidrBlock=CIDR,
            TagSpecifications=[{"ResourceType": "vpc", "Tags": [{"Key": "Name", "Value": f"{NAME}-vpc"}]}],
        )["Vpc"]["VpcId"]

    subnet_ids = []
    for cidr, zone in SUBNETS:
        found = ec2.describe_subnets(
            Filters=[{"Name": "vpc-id", "Values": [vpc_id]}, {"Name": "cidr-block", "Values": [cidr]}]
        )["Subnets"]
        if found:
            subnet_ids.append(found[0]["SubnetId"])
        else:
            subnet_ids.append(
                ec2.create_subnet(VpcId=vpc_id, CidrBlock=cidr, AvailabilityZone=f"{region}{zone}")["Subnet"]["SubnetId"]
            )

    try:
        rds.describe_db_subnet_groups(DBSubnetGroupName=SUBNET_GROUP)
    except rds.exceptions.DBSubnetGroupNotFoundFault:
        rds.create_db_subnet_group(
            DBSubnetGroupName=SUBNET_GROUP,
            DBSubnetGroupDescription="Coffee Manage database subnets",
            SubnetIds=subnet_ids,
        )

    groups = ec2.describe_security_groups(
        Filters=[{"Name": "vpc-id", "Values": [vpc_id]}, {"Name": "group-name", "Values": [SECURITY_GROUP]}]
    )["SecurityGroups"]
    if groups:
        sg_id = groups[0]["GroupId"]
    else:
        sg_id = ec2.create_security_group(
            GroupName=SECURITY_GROUP, Description="Coffee Manage database: MySQL from the VPC", VpcId=vpc_id
        )["GroupId"]
        ec2.authorize_security_group_ingress(
            GroupId=sg_id,
            IpPermissions=[{"IpProtocol": "tcp", "FromPort": 3306, "ToPort": 3306, "IpRanges": [{"CidrIp": CIDR}]}],
        )
    return {
        "events_queue_url": event_feed(EVENTS),
        "vpc_id": vpc_id,
        "subnet_ids": ",".join(subnet_ids),
        "db_subnet_group_name": SUBNET_GROUP,
        "security_group_id": sg_id,
    }


def event_feed(name: str) -> str:
    """The queue and the rule of the operator's event feed (docs/events.md); returns the queue URL."""
    sqs, events = client("sqs"), client("events")
    url = sqs.create_queue(QueueName=name, Attributes={"MessageRetentionPeriod": "86400"})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    rule = events.put_rule(Name=name, EventPattern=json.dumps(EVENT_PATTERN))["RuleArn"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": "events.amazonaws.com"},
            "Action": "sqs:SendMessage",
            "Resource": arn,
            "Condition": {"ArnEquals": {"aws:SourceArn": rule}},
        }],
    }
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
    events.put_targets(Rule=name, Targets=[{"Id": "rds-operator", "Arn": arn}])
    return url


def no_event_feed(name: str) -> None:
    """Removes the rule and the queue of a feed (a set-up without the feed, as the benchmark's "feed
    off"): otherwise moto delivers every event to a queue nobody reads, and its SQS costs grow with
    the queue (each SendMessage counts every message), half of moto's time at N = 10 000."""
    sqs, events = client("sqs"), client("events")
    try:
        events.remove_targets(Rule=name, Ids=["rds-operator"])
        events.delete_rule(Name=name)
    except events.exceptions.ResourceNotFoundException:
        pass
    try:
        sqs.delete_queue(QueueUrl=sqs.get_queue_url(QueueName=name)["QueueUrl"])
    except sqs.exceptions.QueueDoesNotExist:
        pass


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--no-event-feed":
        no_event_feed(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "--event-feed":
        # A feed of its own (tests): a queue and a rule named NAME.
        print(event_feed(sys.argv[2]))
        sys.exit(0)
    ids = ensure()
    if len(sys.argv) == 3 and sys.argv[1] == "--get":
        print(ids[sys.argv[2]])
    else:
        for key, value in ids.items():
            print(f"{key}={value}")
