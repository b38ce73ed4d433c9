"""An in-process LLM fine-tuned under `pragexp.train` (`llm.finetune=lora|full`): the settings, what trains
and its losses (`finetune`), and the tuned weights saved, loaded and checked in peft's folder format
(`adapters`)."""
