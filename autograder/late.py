"""The late penalty of `grading.toml`, as an nbgrader plugin (so the gradebook records it)."""

from __future__ import annotations

from nbgrader.plugins import LateSubmissionPlugin

from autograder.collect import load_policy


class PolicyPenalty(LateSubmissionPlugin):
    """Takes `penalty_per_day` of the points earned for every started day late, up to `max_penalty`,
    after `grace_minutes`."""

    def late_submission_penalty(self, student_id, score, total_seconds):
        policy = load_policy()
        late = (total_seconds or 0) - policy.grace_minutes * 60
        if late <= 0 or not score:
            return 0.0
        days = -(-late // 86400)
        return round(score * min(policy.max_penalty, policy.penalty_per_day * days), 4)
