"""Staff commands: the same services and messages as the dashboard; refusals exit non-zero."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError
from django.utils import timezone

from domains.choices import State
from domains.models import Deploy, Domain, Project
from domains.services import certificates
from tests.fixtures import commits
from tests.fixtures.domains import TARGET

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_createproject_creates_the_owner_and_a_deploy():
    output = run("createproject", "shop", "--owner", "dana", "--plan", "pro", "--deployed")
    project = Project.objects.get(slug="shop")
    members = project.memberships.values_list("user__username", "role")
    assert list(members) == [("dana", "owner")]
    assert project.plan == "pro"
    assert Deploy.objects.filter(project=project, succeeded=True).count() == 1
    assert "shop.petstore.localhost" in output


def test_createproject_refuses_a_taken_slug(shop):
    with pytest.raises(CommandError, match="exists already"):
        run("createproject", "shop", "--owner", "dana")


def test_adddomain_prints_the_record_to_create(shop):
    output = run("adddomain", "shop", "www.example.test")
    assert Domain.objects.filter(project=shop, hostname="www.example.test").exists()
    assert f"CNAME www -> {TARGET} TTL 3600" in output


def test_adddomain_refuses_with_the_dashboards_message(alice):
    run("createproject", "free", "--owner", "alice", "--plan", "free", "--deployed")
    with pytest.raises(CommandError, match="need the Pro plan or above"):
        run("adddomain", "free", "www.example.test")
    run("createproject", "undeployed", "--owner", "alice", "--plan", "pro")
    with pytest.raises(CommandError, match="Deploy the project successfully"):
        run("adddomain", "undeployed", "www.example.test")


def test_several_claims_on_one_name_need_project_to_pick_one(shop, bobs):
    run("adddomain", "shop", "www.example.test")
    added = run("adddomain", "bobs", "WWW.example.test.")
    assert "TXT _petstore-verification.www" in added  # contested: the proof record too
    for command in ("verifydomain", "removedomain"):
        with pytest.raises(CommandError, match=r"several projects \(bobs, shop\).*--project"):
            run(command, "www.example.test")
    printed = run("domainstatus", "www.example.test")
    status = json.loads(printed)
    assert [claim["project"] for claim in status["claims"]] == ["bobs", "shop"]
    assert printed.count('"dns_records"') == 2  # each claim once
    assert all(
        {"project", "state", "check", "certificate", "dns_records"} <= set(claim)
        for claim in status["claims"]
    )
    assert "TXT" in {record["type"] for record in status["claims"][0]["dns_records"]}
    only_bobs = run("domainstatus", "www.example.test", "--project", "bobs")
    assert json.loads(only_bobs)["project"] == "bobs"
    assert only_bobs.count('"dns_records"') == 1  # the claim alone, once
    assert "no longer serves" in run("removedomain", "www.example.test", "--project", "bobs")
    assert list(Domain.objects.values_list("project__slug", flat=True)) == ["shop"]
    with pytest.raises(CommandError, match="The project bobs has no claim on"):
        run("domainstatus", "www.example.test", "--project", "bobs")


def test_removedomain_removes_and_unknown_names_are_refused(shop):
    run("adddomain", "shop", "www.example.test")
    assert "no longer serves" in run("removedomain", "www.example.test")
    assert not Domain.objects.exists()
    with pytest.raises(CommandError, match="No project has the domain"):
        run("removedomain", "www.example.test")


def test_verifydomain_prints_a_failure_and_exits_non_zero(dns_server, shop):
    run("adddomain", "shop", "www.example.test")
    dns_server.add("www.example.test", "A", "203.0.113.7")
    with pytest.raises(CommandError, match="does not verify"):
        run("verifydomain", "www.example.test")
    domain = Domain.objects.get()
    assert domain.check_code == "conflicting_record"


def test_verifydomain_success_queues_the_certificate(
    dns_server, shop, django_capture_on_commit_callbacks
):
    run("adddomain", "shop", "www.example.test")
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        output = run("verifydomain", "www.example.test")
    assert "www.example.test: ok" in output
    # the certificate task only; the check ran in the foreground
    assert len(commits.queued(queued)) == 1
    assert Domain.objects.get().state == State.ISSUING


def test_domainstatus_prints_state_check_and_certificate_as_json(
    dns_server, shop, django_capture_on_commit_callbacks
):
    run("adddomain", "shop", "www.example.test")
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    with django_capture_on_commit_callbacks(execute=False):
        run("verifydomain", "www.example.test")
    certificate = certificates.certificate_issue(domain_id=Domain.objects.get().pk)
    assert certificate is not None
    printed = run("domainstatus", "www.example.test")
    assert printed.count('"dns_records"') == 1  # the one claim, printed once
    status = json.loads(printed)
    assert "claims" not in status
    assert status["state"] == "active"
    assert status["check"]["code"] == "ok"
    assert status["check"]["expected"] == f"CNAME {TARGET}"
    assert status["check"]["found"] == f"CNAME {TARGET}"
    assert status["check"]["checked_at"] and status["check"]["next_check_at"]
    assert status["certificate"] == {
        "state": "issued",
        "problem": None,
        "serial": certificate.serial,
        "not_after": certificate.not_after.isoformat(),
        "renew_after": certificate.renew_after.isoformat(),
        "san": "www.example.test",
        "issuer": "ca.petstore.localhost local CA",
        "ca": None,
    }


def test_a_refused_command_exits_non_zero_with_the_message(capsys):
    # run_from_argv is what `manage.py` runs: it turns a CommandError into exit status 1.
    command = load_command_class("domains", "domainstatus")
    with pytest.raises(SystemExit) as exit_info:
        command.run_from_argv(["manage.py", "domainstatus", "nowhere.example.test"])
    assert exit_info.value.code == 1
    assert "No project has the domain nowhere.example.test" in capsys.readouterr().err


def test_domainstatus_carries_the_troubleshooting_steps_after_30_minutes(
    dns_server, shop, django_capture_on_commit_callbacks
):
    run("adddomain", "shop", "www.example.test")
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    with django_capture_on_commit_callbacks(execute=False):
        run("verifydomain", "www.example.test")
    certificates.certificate_issue(domain_id=Domain.objects.get().pk)  # blocked by CAA
    with time_machine.travel(timezone.now() + timedelta(minutes=31)):
        status = json.loads(run("domainstatus", "www.example.test"))
    assert status["needs_troubleshooting"] is True
    assert status["certificate"]["state"] == "blocked"
    assert status["troubleshooting"]["verifies"] is True
    assert status["troubleshooting"]["caa_blocks"] is True
    assert "letsencrypt.org" in status["troubleshooting"]["caa_message"]
    assert status["troubleshooting"]["ca_refused"] is False
    assert status["troubleshooting"]["ca_refused_message"] == ""


def test_renewcertificate_renews_now_whatever_the_date_and_domainstatus_shows_it(
    dns_server, shop, django_capture_on_commit_callbacks
):
    run("adddomain", "shop", "www.example.test")
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    with django_capture_on_commit_callbacks(execute=False):
        run("verifydomain", "www.example.test")
    first = certificates.certificate_issue(domain_id=Domain.objects.get().pk)
    assert first is not None and first.renew_after > first.created_at  # not due for months

    output = run("renewcertificate", "www.example.test")

    status = json.loads(run("domainstatus", "www.example.test"))["certificate"]
    assert status["serial"] != first.serial
    assert output.startswith(f"Renewed www.example.test: serial {status['serial']}, issuer ")
    assert Domain.objects.get().certificates.count() == 2


def test_renewcertificate_refuses_a_domain_without_a_certificate_in_one_line(shop):
    run("adddomain", "shop", "www.example.test")
    with pytest.raises(CommandError, match=r"^www.example.test has no certificate to renew \("):
        run("renewcertificate", "www.example.test")


def test_renewcertificate_refuses_a_domain_that_stopped_verifying(dns_server, shop):
    run("adddomain", "shop", "www.example.test")
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    run("verifydomain", "www.example.test")
    domain = Domain.objects.get()
    certificates.certificate_issue(domain_id=domain.pk)
    Domain.objects.filter(pk=domain.pk).update(checked_at=None)  # no passing check of late
    refused = "^www.example.test: Not renewed: the domain has not passed a DNS check"
    with pytest.raises(CommandError, match=refused):
        run("renewcertificate", "www.example.test")
