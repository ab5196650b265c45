"""Test copy of the place PaperArena's code builds its judge prompt; the wording is written for pytest-jeval's tests.

Only the class, the method, its signature and the prompt variables follow upstream's paperarena_hub/tools/scorer.py;
pytest-jeval reads the returned f-string as a template and never runs this file.
"""


class LLMScorer:
    def _create_judge_prompt(self, question: str, response: str, ground_truth: str) -> str:
        return f"""TEST-CODE-JUDGE-PROMPT
Ground truth answer: {ground_truth}
Answer to judge: {response}
Question: {question}
Reply with only {{"correct": "true" or "false", "reasoning": "...", "confidence": 0-10}}"""
